// The admin CLI, as built (dist/server/cli/main.js), on a temp DATA_DIR; every effect is
// then checked over HTTP by a real server process on the same directory with signup closed.
import { spawn, spawnSync } from 'node:child_process'
import { readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { COMMAND_USAGE } from '../../server/cli/usage.js'
import { storeLine, withoutStoreLine } from '../support/cli-output.js'
import { runCli, type CliRun } from '../support/cli-process.js'
import { call } from '../support/http.js'
import { freePort, makeDataDir, PROJECT_ROOT, startServerProcess, type ServerProcess } from '../support/server-process.js'

const CLI = join(PROJECT_ROOT, 'dist/server/cli/main.js')
const ALICE_PASSWORD = 'alice password 1'
const BOB_PASSWORD = 'bob password from stdin'

let dataDir: string
let server: ServerProcess | undefined

/** The built CLI on this file's DATA_DIR, its store line taken off stderr. */
async function cli (args: string[], options: { input?: string, env?: Record<string, string> } = {}): Promise<CliRun> {
  const run = await runCli(args, { DATA_DIR: dataDir, ...options.env }, options.input ?? '')
  return { ...run, stderr: withoutStoreLine(run.stderr, dataDir) }
}

const noStack = (run: CliRun) => expect(run.stderr).not.toMatch(/\n\s+at /)

beforeAll(() => { dataDir = makeDataDir() })
afterAll(async () => {
  await server?.stop()
  rmSync(dataDir, { recursive: true, force: true })
})

// Each CLI run is a Node start (plus argon2 for users): generous per-test timeouts on 2 shared cores.
describe('contentd admin CLI', { timeout: 120_000 }, () => {
  it('refuses to create a store unless asked (--init): one line, exit 1, nothing written', async () => {
    const empty = makeDataDir()
    try {
      const run = await cli(['user', 'create', '@stray', '--password', ALICE_PASSWORD], { env: { DATA_DIR: empty } })
      expect(run).toEqual({ code: 1, stdout: '', stderr: `contentd: no store in ${empty} (sqlite); set DATA_DIR to the server's data directory, or add --init to create a new store there\n` })
      expect(readdirSync(empty)).toEqual([])
    } finally {
      rmSync(empty, { recursive: true, force: true })
    }
  })

  it('says on stderr which store it opened, so stdout is only the output', async () => {
    const own = makeDataDir()
    const run = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: PROJECT_ROOT, env: { ...process.env, DATA_DIR: own, LOG_LEVEL: 'silent' }, encoding: 'utf8' })
    try {
      const created = run('user', 'create', '@first', '--password', ALICE_PASSWORD, '--init')
      expect([created.status, created.stdout, created.stderr]).toEqual([0, 'Created user @first\n', storeLine(own)])
      const list = run('user', 'list')
      expect([list.status, list.stderr]).toEqual([0, storeLine(own)])
      expect(list.stdout).toMatch(/^@first\t\S+\n$/)
      expect(run('user', 'list', '--help').stderr).toBe('')
    } finally {
      rmSync(own, { recursive: true, force: true })
    }
  })

  let keyId = ''
  let key = ''

  it('creates users (password by flag or stdin), a project, a scoped key, and imports content', async () => {
    expect(await cli(['user', 'create', '@alice', '--password', ALICE_PASSWORD, '--init'])).toMatchObject({ code: 0, stdout: 'Created user @alice\n' })
    expect(await cli(['user', 'create', 'Bob'], { input: `${BOB_PASSWORD}\n` })).toMatchObject({ code: 0, stdout: 'Created user @bob\n' })
    const list = await cli(['user', 'list'])
    expect(list.code).toBe(0)
    expect(list.stdout.split('\n').filter(Boolean).map(l => l.split('\t')[0])).toEqual(['@alice', '@bob'])

    expect((await cli(['project', 'create', '@alice/demo'])).code).toBe(0)
    const created = await cli(['key', 'create', '@alice', '--name', 'ci', '--permission', 'write', '--project', '@alice/demo', '--expires', '1d'])
    expect(created.code).toBe(0)
    expect(created.stdout.trim().split('\n')).toHaveLength(1)
    key = created.stdout.trim().split(/\s+/).pop() as string
    expect(key).toMatch(/^cdk_/)
    keyId = (/\b(key_[A-Za-z0-9_-]+)/.exec(created.stdout) as RegExpExecArray)[1] as string

    const keys = await cli(['key', 'list', '@alice'])
    expect(keys.stdout).toContain(keyId)
    expect(keys.stdout).not.toContain(key)

    const imported = await cli(['import', '@alice/demo'], { input: JSON.stringify({ title: 'Hi', list: [1, 2] }) })
    expect(imported).toMatchObject({ code: 0 })
    expect(imported.stdout).toContain('version 1')
    const exported = await cli(['export', '@alice/demo'])
    expect(JSON.parse(exported.stdout)).toEqual({ title: 'Hi', list: [1, 2] })
  })

  it('did all of it as the HTTP API sees it, with signup closed', async () => {
    server = await startServerProcess({ dataDir, env: { SIGNUP: 'closed' } })
    const login = await call(server.url, 'POST', '/api/auth/login', { body: { username: 'alice', password: ALICE_PASSWORD } })
    expect(login.status).toBe(200)
    expect((await call(server.url, 'POST', '/api/auth/login', { body: { username: 'bob', password: BOB_PASSWORD } })).status).toBe(200)
    expect((await call(server.url, 'POST', '/api/auth/signup', { body: { username: 'eve', password: 'whatever123' } })).status).toBe(403)

    const content = await call(server.url, 'GET', '/api/@alice/demo/content', { token: key })
    expect(content).toMatchObject({ status: 200, body: { title: 'Hi', list: [1, 2] } })
    expect(content.headers.get('etag')).toBe('"1"')
    expect((await call(server.url, 'POST', '/api/@alice/demo/content/increment', { token: key, body: { path: 'n' } })).status).toBe(200)
    // The change log names the CLI for the import, the key for the increment (docs/change-log.md).
    const log = await call(server.url, 'GET', '/api/@alice/demo/content/changes', { token: key })
    expect(log.body.changes.map((change: any) => [change.op, change.actor])).toEqual([
      ['update', { type: 'system', name: 'cli' }],
      ['increment', { type: 'key', id: keyId, name: 'ci' }]
    ])

    const listed = await call(server.url, 'GET', '/api/keys', { token: login.body.token })
    const view = listed.body.keys.find((k: any) => k.id === keyId)
    expect(view).toMatchObject({ name: 'ci', permission: 'write', projects: ['@alice/demo'] })
    const expiresIn = Date.parse(view.expiresAt) - Date.now()
    expect(expiresIn).toBeGreaterThan(23 * 3600_000)
    expect(expiresIn).toBeLessThanOrEqual(24 * 3600_000)

    // Export sees what the server wrote; revoking stops the key at once.
    expect(JSON.parse((await cli(['export', 'alice/demo'])).stdout)).toEqual({ title: 'Hi', list: [1, 2], n: 1 })
    expect(await cli(['key', 'revoke', keyId])).toMatchObject({ code: 0 })
    expect((await call(server.url, 'GET', '/api/@alice/demo/content', { token: key })).status).toBe(401)
  })

  it('sets, shows and removes a schema, and creates a narrowed key, which the running server enforces', async () => {
    const running = server as ServerProcess
    expect(await cli(['schema', 'get', '@alice/demo'])).toMatchObject({ code: 1, stderr: expect.stringMatching(/SCHEMA_NOT_FOUND/) })
    // The content is {title: "Hi", list: [1, 2], n: 1}: a schema it breaks is refused, naming where.
    const refused = await cli(['schema', 'set', '@alice/demo'], { input: JSON.stringify({ properties: { title: { type: 'number' } } }) })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/^contentd: .*"title" must be number.*\(SCHEMA_VIOLATION\)\n$/)
    expect(await cli(['schema', 'set', '@alice/demo'], { input: '{"type":"nonsense"}' })).toMatchObject({ code: 1, stderr: expect.stringMatching(/INVALID_SCHEMA/) })

    const schema = { type: 'object', properties: { n: { type: 'integer', maximum: 1 } } }
    const file = join(dataDir, 'schema.json')
    writeFileSync(file, JSON.stringify(schema))
    expect(await cli(['schema', 'set', '@alice/demo', file])).toMatchObject({ code: 0, stdout: 'Set the schema of @alice/demo\n' })
    expect(JSON.parse((await cli(['schema', 'get', 'alice/demo'])).stdout)).toEqual(schema)

    const created = await cli(['key', 'create', '@alice', '--name', 'widget', '--permission', 'write', '--path', 'n', '--path', 'votes', '--op', 'increment'])
    expect(created.code).toBe(0)
    expect(created.stdout).toContain('paths n,votes, ops increment')
    const widget = created.stdout.trim().split(/\s+/).pop() as string
    expect((await cli(['key', 'list', '@alice'])).stdout).toMatch(/\tn,votes\tincrement\t/)

    const increment = (path: string) => call(running.url, 'POST', '/api/@alice/demo/content/increment', { token: widget, body: { path } })
    expect(await increment('n')).toMatchObject({ status: 422, body: { code: 'SCHEMA_VIOLATION', errors: [{ path: 'n', message: 'must be <= 1' }] } })
    expect(await increment('title')).toMatchObject({ status: 403, body: { code: 'KEY_SCOPE_DENIED' } })
    expect((await increment('votes.red')).status).toBe(200)

    expect(await cli(['schema', 'rm', '@alice/demo'])).toMatchObject({ code: 0, stdout: 'Removed the schema of @alice/demo\n' })
    expect((await increment('n')).status).toBe(200)
    expect(JSON.parse((await cli(['export', '@alice/demo'])).stdout)).toEqual({ title: 'Hi', list: [1, 2], n: 2, votes: { red: 1 } })

    for (const [args, message] of [
      [['key', 'create', '@alice', '--name', 'x', '--permission', 'write', '--path', 'a..b'], /--path: .*"a\.\.b"/],
      [['key', 'create', '@alice', '--name', 'x', '--permission', 'write', '--op', 'explode'], /--op/],
      [['schema', 'set', '@alice/demo', 'a', 'b'], /expected 1 to 2 arguments, got 3/]
    ] as Array<[string[], RegExp]>) {
      const run = await cli(args)
      expect(run.code, args.join(' ')).toBe(2)
      expect(run.stderr, args.join(' ')).toMatch(message)
      noStack(run)
    }
    const missing = await cli(['schema', 'set', '@alice/demo', join(dataDir, 'no-such-file.json')])
    expect(missing.code).toBe(1)
    noStack(missing)
  })

  it('refuses bad input with one line and the right exit code, never a stack trace', async () => {
    const cases: Array<[string[], number, RegExp, string?]> = [
      [[], 2, /usage: contentd/],
      [['frobnicate'], 2, /unknown command "frobnicate"/],
      [['user', 'delete', '@alice'], 2, /unknown command "user delete"/],
      [['key', 'create', '@alice', '--permission', 'write'], 2, /--name is required\nusage: contentd key create/],
      [['key', 'create', '@alice', '--name', 'x', '--permission', 'admin'], 2, /--permission must be read or write/],
      [['key', 'create', '@alice', '--name', 'x', '--permission', 'read', '--expires', 'soon'], 2, /--expires must be a duration/],
      [['project', 'create', '@alice/demo', '--bogus'], 2, /Unknown option '--bogus'/],
      [['project', 'create'], 2, /expected 1 argument, got 0/],
      [['project', 'create', 'not a ref'], 2, /is not a project reference/],
      [['project', 'create', '@alice/demo'], 1, /PROJECT_EXISTS/],
      [['user', 'create', '@alice', '--password', 'long enough'], 1, /USERNAME_TAKEN/],
      [['export', '@alice/missing'], 1, /PROJECT_NOT_FOUND/],
      [['export', '@nobody/demo'], 1, /USER_NOT_FOUND/],
      [['import', '@alice/demo'], 1, /^contentd: stdin is not valid JSON \(.+\)\n$/, 'not\njson'],
      [['key', 'revoke', 'key_nope'], 1, /KEY_NOT_FOUND/],
      [['user', 'list'], 1, /Invalid configuration: STORE/]
    ]
    for (const [args, code, message, input] of cases) {
      const env = args[0] === 'user' && args[1] === 'list' ? { STORE: 'postgres' } : undefined
      const run = await cli(args, { ...(input === undefined ? {} : { input }), ...(env ? { env } : {}) })
      expect(run.code, args.join(' ')).toBe(code)
      expect(run.stderr, args.join(' ')).toMatch(message)
      expect(run.stdout, args.join(' ')).toBe('')
      noStack(run)
    }
  })

  it('holds new users to the password list and users to their quotas, like the HTTP API', async () => {
    const common = await cli(['user', 'create', '@carol', '--password', '12345678'])
    expect(common.code).toBe(1)
    expect(common.stderr).toBe('contentd: This password is too easy to guess; choose another one: it is one of the most common passwords (PASSWORD_TOO_COMMON)\n')
    noStack(common)
    const quota = await cli(['project', 'create', '@alice/one-too-many'], { env: { MAX_PROJECTS_PER_USER: '1' } })
    expect(quota.code).toBe(1)
    expect(quota.stderr).toMatch(/a user may have at most 1 project \(QUOTA_EXCEEDED\)/)
    expect((await cli(['user', 'list'])).stdout).not.toContain('@carol')
  })

  it('words invalid flags and arguments for a terminal: the flag or argument, never the request body', async () => {
    const usage = (command: string) => `usage: ${COMMAND_USAGE[command]}\n`
    const long = 'a'.repeat(201)
    const cases: Array<[string[], number, string, string?]> = [
      [['user', 'create', '@carol', '--password', 'short'], 2, `contentd: --password must have at least 8 characters\n${usage('user create')}`],
      // The password is never echoed, even when refused.
      [['user', 'create', '@carol'], 2, `contentd: --password must have at least 8 characters\n${usage('user create')}`, 'tiny\n'],
      [['user', 'create', '@al_ice', '--password', 'long enough'], 2, `contentd: @name must be 1-39 letters, digits or "-", not starting or ending with "-" (got "@al_ice")\n${usage('user create')}`],
      [['project', 'create', '@alice/other', '--name', '  '], 2, `contentd: --name must not be empty (got "  ")\n${usage('project create')}`],
      // Long values are not echoed.
      [['project', 'create', '@alice/other', '--name', long], 2, `contentd: --name must have at most 200 characters\n${usage('project create')}`],
      [['key', 'create', '@alice', '--name', '', '--permission', 'read'], 2, `contentd: --name must not be empty (got "")\n${usage('key create')}`],
      [['key', 'create', '@alice', '--name', 'x', '--permission', 'read', '--project', '@alice/demo', '--project', 'demo'], 2, `contentd: --project must look like "@user/slug" (got "demo")\n${usage('key create')}`],
      [['import', '@alice/demo'], 1, 'contentd: stdin must hold a JSON object, not an array\n', '[1, 2]'],
      [['import', '@alice/demo'], 1, 'contentd: stdin must hold a JSON object, not null\n', 'null']
    ]
    for (const [args, code, stderr, input] of cases) {
      const run = await cli(args, input === undefined ? {} : { input })
      expect(run, args.join(' ')).toEqual({ code, stdout: '', stderr })
      expect(run.stderr).not.toMatch(/request|body/i)
    }
    // Nothing refused was created.
    const users = await cli(['user', 'list'])
    expect(users.stdout).not.toMatch(/carol|al_ice/)
    expect(await cli(['export', '@alice/other'])).toMatchObject({ code: 1, stderr: 'contentd: Project not found: @alice/other (PROJECT_NOT_FOUND)\n' })
  })

  it('answers --help for every command', async () => {
    const main = await cli(['--help'])
    expect(main.code).toBe(0)
    const commands = ['serve', 'user create', 'user list', 'project create', 'key create', 'key list', 'key revoke', 'export', 'import']
    for (const command of commands) {
      expect(main.stdout).toContain(`contentd ${command}`)
      const help = await cli([...command.split(' '), '--help'])
      expect(help.code, command).toBe(0)
      expect(help.stdout, command).toMatch(new RegExp(`^usage: contentd ${command}`))
    }
  })

  it('serve starts the same server, which stops cleanly on SIGTERM', async () => {
    const port = await freePort()
    const child = spawn(process.execPath, [CLI, 'serve'], { cwd: PROJECT_ROOT, env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'silent' }, stdio: 'ignore' })
    const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
    try {
      let health = 0
      for (let i = 0; i < 200 && health !== 200; i++) {
        health = await fetch(`http://127.0.0.1:${port}/healthz`).then(r => r.status, () => 0)
        if (health !== 200) await new Promise(r => setTimeout(r, 50))
      }
      expect(health).toBe(200)
      expect((await fetch(`http://127.0.0.1:${port}/openapi.json`)).status).toBe(200)
    } finally {
      child.kill('SIGTERM')
    }
    expect(await exited).toBe(0)
  })
})
