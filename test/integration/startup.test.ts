// Bad configuration stops the process before it listens: a non-zero exit and one line on
// stderr that names the variable, with no stack trace (DESIGN.md §8).
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { makeDataDir, runServerUntilExit, startServerProcess } from '../support/server-process.js'

const dataDir = makeDataDir()
const runServer = (env: Record<string, string>) => runServerUntilExit({ DATA_DIR: dataDir, ...env })

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

describe('start-up with good configuration', () => {
  it('says nothing at LOG_LEVEL=warn: V8 accepts the heap-growth flag the entry point sets', async () => {
    // server/heap-growth.ts calls v8.setFlagsFromString; a Node whose V8 dropped the flag
    // would print "unrecognized flag" and silently lose the memory bound it buys.
    const server = await startServerProcess()
    await server.stop()
    rmSync(server.dataDir, { recursive: true, force: true })
    expect(server.output()).not.toMatch(/unrecognized flag/i)
    expect(server.output().trim()).toBe('')
  })
})
