// Bad configuration stops the process before it listens: a non-zero exit and one line on
// stderr that names the variable, with no stack trace (docs/design.md §8).
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { listeningLine } from '../../server/startup-line.js'
import { makeDataDir, PROJECT_ROOT, runServerUntilExit, startServerProcess } from '../support/server-process.js'

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

describe('the start-up line (docs/design.md §13)', () => {
  const humanLines = (stdout: string) => stdout.split('\n').filter(line => line !== '' && !line.startsWith('{'))

  it('at LOG_LEVEL=info: one plain line on stdout with the URL, the pages and the data directory, besides the JSON logs', async () => {
    const server = await startServerProcess({ env: { LOG_LEVEL: 'info' } })
    await server.stop()
    rmSync(server.dataDir, { recursive: true, force: true })
    expect(humanLines(server.stdout())).toEqual([
      `contentd listening on http://127.0.0.1:${server.port} — dashboard /, API docs /docs — data in ${server.dataDir} (sqlite)`
    ])
    const json = server.stdout().split('\n').filter(line => line.startsWith('{')).map(line => JSON.parse(line))
    expect(json).toContainEqual(expect.objectContaining({ msg: 'contentd listening', port: server.port }))
  })

  it('names localhost when listening on every interface, and a relative DATA_DIR as configured', async () => {
    const server = await startServerProcess({ env: { LOG_LEVEL: 'info', HOST: '0.0.0.0', DATA_DIR: './relative-data-dir' } })
    await server.stop()
    rmSync(server.dataDir, { recursive: true, force: true })
    rmSync(join(PROJECT_ROOT, 'relative-data-dir'), { recursive: true, force: true })
    expect(humanLines(server.stdout())).toEqual([
      `contentd listening on http://localhost:${server.port} — dashboard /, API docs /docs — data in ./relative-data-dir (sqlite)`
    ])
  })

  it('is worded from the configuration: wildcard hosts, IPv6 literals, MongoDB without credentials', () => {
    const sqlite = { store: 'sqlite' as const, dataDir: './data', mongodbUri: undefined }
    expect(listeningLine({ ...sqlite, host: '0.0.0.0' }, 3000)).toBe('contentd listening on http://localhost:3000 — dashboard /, API docs /docs — data in ./data (sqlite)')
    expect(listeningLine({ ...sqlite, host: '::' }, 8080)).toContain('http://localhost:8080 ')
    expect(listeningLine({ ...sqlite, host: '::1' }, 8080)).toContain('http://[::1]:8080 ')
    expect(listeningLine({ ...sqlite, host: 'contentd.internal' }, 80)).toContain('http://contentd.internal:80 ')
    const mongo = (uri: string) => listeningLine({ host: '0.0.0.0', store: 'mongodb', dataDir: './data', mongodbUri: uri }, 3000)
    const withSecret = mongo('mongodb://admin:s3cr%40t@db1:27017,db2:27017/content?replicaSet=rs0&authSource=admin')
    expect(withSecret).toBe('contentd listening on http://localhost:3000 — dashboard /, API docs /docs — data in MongoDB content at db1:27017,db2:27017 (mongodb)')
    expect(withSecret).not.toMatch(/admin|s3cr/)
    expect(mongo('mongodb+srv://u:p@cluster0.example.net')).toMatch(/data in MongoDB contentd at cluster0\.example\.net \(mongodb\)$/)
  })
})
