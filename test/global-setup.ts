// Builds dist/ before the tests (when stale), for the tests that run the real server process.
import { execFileSync } from 'node:child_process'
import { join, resolve } from 'node:path'

export default function setup (): void {
  const root = resolve(import.meta.dirname, '..')
  execFileSync(process.execPath, [join(root, 'scripts/build.mjs'), '--if-stale'], { stdio: 'inherit' })
}
