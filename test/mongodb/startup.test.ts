// The real server (node dist/server/index.js) with STORE=mongodb pointed at a loopback port
// where nothing listens: the real driver times out selecting a server, and the process must
// exit non-zero with ONE line naming MongoDB, no stack trace, no password. This exercises
// the actual start-up path; it needs no MongoDB server.
import { spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { freePort, makeDataDir, PROJECT_ROOT } from '../support/server-process.js'

const dirs: string[] = []
afterAll(() => { for (const dir of dirs) rmSync(dir, { recursive: true, force: true }) })

interface Exit { code: number | null, stderr: string, stdout: string, ms: number }

async function startAndWaitForExit (env: Record<string, string>): Promise<Exit> {
  const dataDir = makeDataDir()
  dirs.push(dataDir)
  const port = await freePort()
  const started = Date.now()
  const child = spawn(process.execPath, [join(PROJECT_ROOT, 'dist/server/index.js')], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', REDIS_URL: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stderr = ''
  let stdout = ''
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  // A server that wrongly keeps running is killed, so the test fails instead of hanging.
  const guard = setTimeout(() => child.kill('SIGKILL'), 15_000)
  const code = await new Promise<number | null>(resolve => child.once('exit', exitCode => resolve(exitCode)))
  clearTimeout(guard)
  return { code, stderr, stdout, ms: Date.now() - started }
}

describe('STORE=mongodb start-up against an unreachable MongoDB', () => {
  it('exits non-zero within the server-selection timeout with one clear line naming MongoDB', async () => {
    const deadPort = await freePort() // nothing listens there
    const exit = await startAndWaitForExit({ STORE: 'mongodb', MONGODB_URI: `mongodb://127.0.0.1:${deadPort}/x` })
    expect(exit.code).not.toBe(0)
    expect(exit.code).not.toBeNull() // exited by itself, not killed by the guard
    const lines = exit.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(new RegExp(`^contentd: cannot open the mongodb store: MongoDB at 127\\.0\\.0\\.1:${deadPort} is unreachable \\(server selection timed out after 5000 ms`))
    expect(exit.stderr).not.toMatch(/\n\s+at /)
    expect(exit.ms).toBeLessThan(12_000)
  })

  it('never prints the password from MONGODB_URI', async () => {
    const deadPort = await freePort()
    const exit = await startAndWaitForExit({ STORE: 'mongodb', MONGODB_URI: `mongodb://app:Sup3rSecretPw@127.0.0.1:${deadPort}/x?authSource=admin` })
    expect(exit.code).not.toBe(0)
    expect(exit.code).not.toBeNull()
    expect(exit.stderr).toMatch(/MongoDB at 127\.0\.0\.1:\d+ is unreachable/)
    expect(exit.stderr + exit.stdout).not.toContain('Sup3rSecretPw')
  })
})
