// Builds dist/ once before the tests, for the tests that run the real server process.
import { execFileSync } from 'node:child_process'
import { join, resolve } from 'node:path'

export default function setup (): void {
  const root = resolve(import.meta.dirname, '..')
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' })
}
