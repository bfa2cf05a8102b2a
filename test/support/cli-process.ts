// The admin CLI as built (dist/server/cli/main.js), run as a child process on a DATA_DIR.
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { PROJECT_ROOT } from './server-process.js'

const CLI = join(PROJECT_ROOT, 'dist/server/cli/main.js')

export interface CliRun { code: number | null, stdout: string, stderr: string }

export function runCli (args: string[], env: Record<string, string>, input = ''): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, LOG_LEVEL: 'silent', ...env },
      stdio: ['pipe', 'pipe', 'pipe']
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c: Buffer) => { stdout += c.toString() })
    child.stderr.on('data', (c: Buffer) => { stderr += c.toString() })
    child.on('error', reject)
    child.on('close', code => resolve({ code, stdout, stderr }))
    child.stdin.end(input)
  })
}
