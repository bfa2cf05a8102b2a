// Bad configuration stops the process before it listens: a non-zero exit and one line on
// stderr that names the variable, with no stack trace (DESIGN.md §8).
import { spawn } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { freePort, makeDataDir, PROJECT_ROOT } from '../support/server-process.js'

interface Run { code: number | null, stdout: string, stderr: string }

const dataDir = makeDataDir()

async function runServer (env: Record<string, string>): Promise<Run> {
  const port = await freePort()
  const child = spawn(process.execPath, [join(PROJECT_ROOT, 'dist/server/index.js')], {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  // A server that wrongly starts would run forever: stop it so the test fails instead of hanging.
  const guard = setTimeout(() => child.kill('SIGKILL'), 15_000)
  const code = await new Promise<number | null>(resolve => child.once('exit', c => resolve(c)))
  clearTimeout(guard)
  return { code, stdout, stderr }
}

describe('start-up with bad configuration', () => {
  afterAll(() => { rmSync(dataDir, { recursive: true, force: true }) })

  it.each([
    ['PORT', { PORT: 'abc' }],
    ['PORT', { PORT: '70000' }],
    ['STORE', { STORE: 'bogus' }],
    ['SIGNUP', { SIGNUP: 'maybe' }],
    ['BODY_LIMIT', { BODY_LIMIT: '-5' }],
    ['CONTENT_LIMIT', { CONTENT_LIMIT: '1kb' }],
    ['RATE_LIMIT', { RATE_LIMIT: 'lots' }],
    ['SESSION_TTL', { SESSION_TTL: 'forever' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }],
    ['MONGODB_URI', { STORE: 'mongodb' }],
    ['REDIS_URL', { REDIS_URL: 'http://localhost:6379' }]
  ])('%s (%o): exits non-zero with one line naming it', async (variable, env) => {
    const run = await runServer(env)
    expect(run.code).not.toBe(0)
    expect(run.code).not.toBeNull()
    const lines = run.stderr.split('\n').filter(line => line.trim() !== '')
    expect(lines, run.stderr).toHaveLength(1)
    expect(lines[0]).toContain(variable)
    expect(run.stderr).not.toMatch(/^\s+at /m)
    expect(run.stderr).not.toMatch(/\.(js|ts):\d+/)
    expect(run.stdout).toBe('')
  })

  it('a DATA_DIR that cannot be created: non-zero, one line, no stack', async () => {
    // A directory cannot be made under a regular file (ENOTDIR), whoever runs the test.
    const file = join(dataDir, 'a-file')
    writeFileSync(file, 'not a directory')
    const run = await runServer({ DATA_DIR: join(file, 'data') })
    expect(run.code).not.toBe(0)
    const lines = run.stderr.split('\n').filter(line => line.trim() !== '')
    expect(lines, run.stderr).toHaveLength(1)
    expect(lines[0]).toMatch(/store|DATA_DIR|a-file/)
    expect(run.stderr).not.toMatch(/^\s+at /m)
  })

  it('a port already in use: non-zero, one line naming the port', async () => {
    const { createServer } = await import('node:net')
    const blocker = createServer()
    const port = await new Promise<number>(resolve => blocker.listen(0, '127.0.0.1', () => resolve((blocker.address() as { port: number }).port)))
    try {
      const run = await runServer({ PORT: String(port) })
      expect(run.code).not.toBe(0)
      const lines = run.stderr.split('\n').filter(line => line.trim() !== '')
      expect(lines, run.stderr).toHaveLength(1)
      expect(lines[0]).toContain(String(port))
    } finally {
      await new Promise(resolve => blocker.close(resolve))
    }
  })
})
