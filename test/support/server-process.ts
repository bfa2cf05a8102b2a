// The real server as a child process (node dist/server/index.js, built by the global setup),
// on a free port: for restart, multi-process and signal tests.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

export const PROJECT_ROOT = resolve(import.meta.dirname, '..', '..')

export async function freePort (): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolvePort(port))
    })
  })
}

export interface ServerProcess {
  url: string
  port: number
  dataDir: string
  child: ChildProcess
  /** stdout and stderr, interleaved as they arrived. */
  output (): string
  /** stdout alone. */
  stdout (): string
  /** Sends the signal and waits for the exit; resolves with the exit code (null if killed). */
  stop (signal?: NodeJS.Signals): Promise<number | null>
}

export function makeDataDir (): string {
  return mkdtempSync(join(tmpdir(), 'contentd-proc-'))
}

export async function startServerProcess (options: { dataDir?: string, env?: Record<string, string>, port?: number } = {}): Promise<ServerProcess> {
  const port = options.port ?? await freePort()
  const dataDir = options.dataDir ?? makeDataDir()
  const child = spawn(process.execPath, [join(PROJECT_ROOT, 'dist/server/index.js')], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, RATE_LIMIT: '0', LOG_LEVEL: 'warn', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  let stdout = ''
  child.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString(); stdout += chunk.toString() })
  child.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const exited = new Promise<number | null>(resolveExit => child.once('exit', code => resolveExit(code)))
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 20_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}: ${output}`)
    try {
      if ((await fetch(`${url}/healthz`)).ok) break
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) { child.kill('SIGKILL'); throw new Error(`server did not start: ${output}`) }
    await new Promise(r => setTimeout(r, 50))
  }
  return {
    url,
    port,
    dataDir,
    child,
    output: () => output,
    stdout: () => stdout,
    async stop (signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      return exited
    }
  }
}

export interface ServerExit {
  code: number | null
  stdout: string
  stderr: string
  /** From spawn to exit. */
  ms: number
}

/**
 * Runs the server expecting it to stop by itself (a start-up failure), in a clean environment
 * plus `env`. A server that wrongly keeps running is killed after 15 s, so the test fails
 * instead of hanging.
 */
export async function runServerUntilExit (env: Record<string, string> & { DATA_DIR: string }): Promise<ServerExit> {
  const port = await freePort()
  const started = Date.now()
  const child = spawn(process.execPath, [join(PROJECT_ROOT, 'dist/server/index.js')], {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  // Generous: a busy CI machine takes seconds just to load the server; the guard only stops
  // a process that would never exit (tests then see code null).
  const guard = setTimeout(() => child.kill('SIGKILL'), 40_000)
  const code = await new Promise<number | null>(resolve => child.once('exit', exitCode => resolve(exitCode)))
  clearTimeout(guard)
  return { code, stdout, stderr, ms: Date.now() - started }
}
