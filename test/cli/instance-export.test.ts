// `contentd export --all` / `contentd import --all` (docs/design.md §18) with the built CLI
// and real server processes: an instance built over HTTP, exported while its server runs,
// imported into a new DATA_DIR, answers the same over HTTP (content, every `?version=N`,
// `GET changes`, members, schema, webhooks, keys), its user logs in with their password and
// its key authenticates; export → import → export gives the same lines. Refusals: a store
// holding data, a corrupted line (named by its number, nothing loaded).
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { runCli } from '../support/cli-process.js'
import { call, ownerWithProject, PASSWORD, signup } from '../support/http.js'
import { makeDataDir, startServerProcess, type ServerProcess } from '../support/server-process.js'

const dirs: string[] = []
const servers: ServerProcess[] = []
const dataDir = () => { const dir = makeDataDir(); dirs.push(dir); return dir }
// The importing instance needs the exporting one's key for webhook secrets (docs/operations.md).
const ENV = { WEBHOOK_SECRET_KEY: 'an export test key of at least 32 characters', WEBHOOK_ALLOW_PRIVATE: 'true' }
const start = async (dir: string) => {
  const server = await startServerProcess({ dataDir: dir, env: ENV })
  servers.push(server)
  return server
}

afterAll(async () => {
  for (const server of servers) await server.stop('SIGKILL')
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const storeCounts = (dir: string) => {
  const db = new Database(join(dir, 'contentd.sqlite'), { readonly: true })
  try {
    const count = (table: string) => db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number
    return { users: count('users'), projects: count('projects'), api_keys: count('api_keys'), changes: count('changes'), webhooks: count('webhooks') }
  } finally {
    db.close()
  }
}

describe('contentd export --all / import --all', { timeout: 120_000 }, () => {
  let dump = ''
  let sourceDir = ''
  let key = ''
  let path = ''
  let version = 0

  it('moves the whole instance to a new store that answers the same, passwords and keys included', async () => {
    sourceDir = dataDir()
    const source = await start(sourceDir)
    const owner = await ownerWithProject(source.url, 'mover')
    key = owner.key
    path = owner.path
    await signup(source.url, 'helper')
    expect((await call(source.url, 'PUT', `${path}/members/@helper`, { token: owner.session, body: { role: 'editor' } })).status).toBe(200)
    expect((await call(source.url, 'PUT', `${path}/schema`, { token: owner.session, body: { type: 'object', properties: { n: { type: 'number' } } } })).status).toBe(200)
    expect((await call(source.url, 'POST', `${path}/webhooks`, { token: owner.session, body: { url: 'http://127.0.0.1:9/hook' } })).status).toBe(201)
    for (let i = 0; i < 5; i++) expect((await call(source.url, 'POST', `${path}/content/increment`, { token: key, body: { path: 'n' } })).status).toBe(200)
    expect((await call(source.url, 'POST', `${path}/content/set`, { token: key, body: { path: 'title', value: 'ünïcode ✓' } })).status).toBe(200)
    expect((await call(source.url, 'POST', `${path}/content/revert`, { token: key, body: { version: 3 } })).status).toBe(200)
    expect((await call(source.url, 'POST', `${path}/content/increment`, { token: key, body: { path: 'n', value: 10 } })).status).toBe(200)

    // Exported while the server runs (one read transaction: one moment of the store).
    const exported = await runCli(['export', '--all'], { DATA_DIR: sourceDir })
    expect(exported.code, exported.stderr).toBe(0)
    dump = exported.stdout
    const lines = dump.trimEnd().split('\n')
    expect(exported.stderr).toContain(`exported ${lines.length - 1} records`)
    expect(JSON.parse(lines[0] as string)).toEqual({ type: 'header', format: 'contentd-instance', version: 1 })
    expect(dump).not.toContain(key) // keys travel as hashes only

    const targetDir = dataDir()
    const refusedNew = await runCli(['import', '--all'], { DATA_DIR: targetDir }, dump)
    expect(refusedNew.code).toBe(1)
    expect(refusedNew.stderr).toMatch(/--init/)
    const imported = await runCli(['import', '--all', '--init'], { DATA_DIR: targetDir }, dump)
    expect(imported.code, imported.stderr).toBe(0)
    expect(imported.stdout).toBe('Imported 2 users, 1 API keys, 1 projects, 1 schemas, 1 members, ' +
      `${lines.filter(l => l.includes('"type":"checkpoint"')).length} checkpoints, 8 changes, 1 webhooks, 0 rules documents, 0 app sign-in settings\n`)
    expect(storeCounts(targetDir)).toEqual(storeCounts(sourceDir))

    const again = await runCli(['export', '--all'], { DATA_DIR: targetDir })
    expect(again.stdout).toBe(dump)

    const target = await start(targetDir)
    const current = await call(source.url, 'GET', `${path}/content`, { token: key })
    version = Number(current.headers.get('etag')?.replace(/"/g, ''))
    expect(version).toBe(8)
    // The password hash moved: the user logs in on the new store. Sessions stay behind.
    const login = await call(target.url, 'POST', '/api/auth/login', { body: { username: 'mover', password: PASSWORD } })
    expect(login.status).toBe(200)
    expect((await call(target.url, 'POST', '/api/auth/login', { body: { username: 'mover', password: 'not the password' } })).status).toBe(401)
    expect((await call(target.url, 'GET', `${path}/content`, { token: owner.session })).status).toBe(401)
    const session = login.body.token as string
    for (const url of [`${path}/content`, `${path}/content/changes?since=0`, `${path}/content/changes?since=5`, `${path}/members`, `${path}/schema`]) {
      const [a, b] = [await call(source.url, 'GET', url, { token: owner.session }), await call(target.url, 'GET', url, { token: session })]
      expect(b.status, url).toBe(200)
      expect(b.body, url).toEqual(a.body)
    }
    // Both servers go on retrying the unreachable webhook, so its retry times move: compare the rest.
    const hooks = async (url: string, token: string) => ((await call(url, 'GET', `${path}/webhooks`, { token })).body.webhooks as Array<Record<string, unknown>>)
      .map(({ id, url, paths, ops, description, enabled, createdAt }) => ({ id, url, paths, ops, description, enabled, createdAt }))
    const sourceHooks = await hooks(source.url, owner.session)
    expect(sourceHooks).toHaveLength(1)
    expect(await hooks(target.url, session)).toEqual(sourceHooks)
    for (let v = 0; v <= version; v++) {
      const [a, b] = [await call(source.url, 'GET', `${path}/content?version=${v}`, { token: key }), await call(target.url, 'GET', `${path}/content?version=${v}`, { token: key })]
      expect(b.status).toBe(200)
      expect(b.body, `version ${v}`).toEqual(a.body)
    }
    // The key authenticates there (its hash moved), and writing goes on after the imported log.
    expect((await call(target.url, 'POST', `${path}/content/increment`, { token: key, body: { path: 'n' } })).status).toBe(200)
    expect((await call(target.url, 'GET', `${path}/content/changes?since=${version}`, { token: session })).body.changes).toMatchObject([{ version: version + 1, op: 'increment' }])
    expect((await call(target.url, 'GET', `${path}/content`, { token: 'cd_not_a_key' })).status).toBe(401)
  })

  it('refuses a store holding a user or project: exit 1, one line, nothing changed', async () => {
    const before = storeCounts(sourceDir)
    const refused = await runCli(['import', '--all'], { DATA_DIR: sourceDir }, dump)
    expect(refused.code).toBe(1)
    expect(refused.stdout).toBe('')
    expect(refused.stderr).toMatch(/^contentd: data in .*\ncontentd: the store is not empty \(it holds a user or a project\): import --all loads into an empty store only\n$/)
    expect(storeCounts(sourceDir)).toEqual(before)
  })

  it('stops at a corrupted line, naming its number, and leaves the new store empty', async () => {
    const lines = dump.trimEnd().split('\n')
    const changeLine = lines.findIndex(line => line.includes('"type":"change"')) + 1
    const cases: Array<[string, RegExp]> = [
      [lines.map((line, i) => i + 1 === changeLine ? line.slice(0, -7) : line).join('\n'), new RegExp(`^contentd: line ${changeLine}: not JSON`)],
      [lines.map((line, i) => i + 1 === 3 ? line.replace('"username":', '"name":') : line).join('\n'), /^contentd: line 3: /],
      [lines.slice(0, changeLine + 1).join('\n'), /^contentd: line \d+: project .*'s change log ends at version 2, the project is at 8$/]
    ]
    for (const [input, message] of cases) {
      const dir = dataDir()
      const run = await runCli(['import', '--all', '--init'], { DATA_DIR: dir }, input)
      expect(run.code, run.stderr).toBe(1)
      expect(run.stdout).toBe('')
      const errorLines = run.stderr.split('\n').filter(line => line !== '' && !line.startsWith('contentd: data in'))
      expect(errorLines, run.stderr).toHaveLength(1)
      expect(errorLines[0]).toMatch(message)
      expect(storeCounts(dir)).toEqual({ users: 0, projects: 0, api_keys: 0, changes: 0, webhooks: 0 })
    }
  })

  it('says how to use --all', async () => {
    const both = await runCli(['export', '@mover/demo', '--all'], { DATA_DIR: sourceDir })
    expect(both.code).toBe(2)
    expect(both.stderr).toMatch(/--all takes no project/)
    const neither = await runCli(['import'], { DATA_DIR: sourceDir })
    expect(neither.code).toBe(2)
    expect(neither.stderr).toMatch(/expected @name\/slug, or --all/)
    expect(readFileSync(join(sourceDir, 'contentd.sqlite')).length).toBeGreaterThan(0)
  })
})
