// `contentd backup` and `contentd restore` (docs/design.md §18) on real stores: a backup
// taken by the built CLI while a real server process serves a write load holds every write
// acknowledged before it began; restore refuses (one line, nothing changed) while a server
// has the store open, over existing data without --force, and for a missing, truncated,
// corrupted or foreign file.
import { createHash } from 'node:crypto'
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { startLoad } from '../durability/load.js'
import { runCli, type CliRun } from '../support/cli-process.js'
import { call, ownerWithProject } from '../support/http.js'
import { makeDataDir, startServerProcess, type ServerProcess } from '../support/server-process.js'
import { until } from '../support/wait.js'

const dirs: string[] = []
const servers: ServerProcess[] = []
const dataDir = () => { const dir = makeDataDir(); dirs.push(dir); return dir }
const start = async (dir: string, env: Record<string, string> = {}) => {
  const server = await startServerProcess({ dataDir: dir, env: { HISTORY_LIMIT: '0', ...env } })
  servers.push(server)
  return server
}

afterAll(async () => {
  for (const server of servers) await server.stop('SIGKILL')
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const digest = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex')

/** A refusal: exit 1, exactly one line on stderr, no stack, nothing on stdout. */
function expectRefusal (run: CliRun, pattern: RegExp): void {
  expect(run.code, run.stderr).toBe(1)
  expect(run.stdout).toBe('')
  expect(run.stderr.split('\n').filter(Boolean)).toHaveLength(1)
  expect(run.stderr).toMatch(pattern)
}

describe('contentd backup', { timeout: 120_000 }, () => {
  it('copies the store while a server serves writes; the copy is checked, and holds every write acknowledged before it began', async () => {
    const dir = dataDir()
    const server = await start(dir)
    const { key, path } = await ownerWithProject(server.url, 'keeper')
    const load = startLoad(server.url, key, path, 'b')
    await until(() => load.tally.pushesAcked.size >= 200, 'writes acknowledged under load', 30_000)
    const ackedBefore = new Set(load.tally.pushesAcked)
    const incrementsBefore = load.tally.incrementsAcked
    const out = join(dataDir(), 'copy.sqlite')
    const backup = await runCli(['backup', '--out', out], { DATA_DIR: dir })
    const ackedDuring = load.tally.pushesAcked.size - ackedBefore.size
    await load.stop()
    expect(backup.code, backup.stderr).toBe(0)
    expect(backup.stdout).toBe(`Backed up ${join(dir, 'contentd.sqlite')} to ${out} (${readFileSync(out).length} bytes, integrity ok)\n`)
    console.log(`backup under load: ${ackedBefore.size} pushes acknowledged before it, ${ackedDuring} while it ran`)
    expect(ackedDuring, 'the server went on acknowledging writes while the backup ran').toBeGreaterThan(0)
    // One self-contained file: nothing beside it, and it passes SQLite's own check.
    expect(readdirSync(join(out, '..'))).toEqual(['copy.sqlite'])
    const copy = new Database(out, { readonly: true })
    expect(copy.pragma('integrity_check', { simple: true })).toBe('ok')
    expect(copy.pragma('journal_mode', { simple: true })).toBe('delete')
    copy.close()

    // Served by a server of its own, the copy has every write acknowledged before it began.
    const restoredDir = dataDir()
    copyFileSync(out, join(restoredDir, 'contentd.sqlite'))
    const fromCopy = await start(restoredDir)
    const content = await call(fromCopy.url, 'GET', `${path}/content`, { token: key })
    expect(content.status).toBe(200)
    const stored = new Set(content.body.log as string[])
    expect([...ackedBefore].filter(tag => !stored.has(tag)), 'acknowledged before the backup, missing from it').toEqual([])
    expect(content.body.counter).toBeGreaterThanOrEqual(incrementsBefore)
  })

  it('writes contentd-<UTC time>.sqlite in DATA_DIR/backups, or in BACKUP_DIR; refuses an existing --out and a missing store', async () => {
    const dir = dataDir()
    expect((await runCli(['user', 'create', '@alice', '--init', '--password', 'alice password 1'], { DATA_DIR: dir })).code).toBe(0)
    const first = await runCli(['backup'], { DATA_DIR: dir })
    expect(first.code, first.stderr).toBe(0)
    const [name] = readdirSync(join(dir, 'backups'))
    expect(name).toMatch(/^contentd-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}Z\.sqlite$/)
    expect(first.stdout).toContain(join(dir, 'backups', name as string))
    const backupDir = join(dataDir(), 'elsewhere')
    const second = await runCli(['backup'], { DATA_DIR: dir, BACKUP_DIR: backupDir })
    expect(second.code, second.stderr).toBe(0)
    expect(readdirSync(backupDir)).toHaveLength(1)

    const out = join(backupDir, 'taken.sqlite')
    writeFileSync(out, 'precious')
    expectRefusal(await runCli(['backup', '--out', out], { DATA_DIR: dir }), /already exists/)
    expect(readFileSync(out, 'utf8')).toBe('precious')
    expectRefusal(await runCli(['backup', '--out', join(backupDir, 'x.sqlite')], { DATA_DIR: join(dir, 'nothing-here') }), /there is no store at/)
  })
})

describe('contentd restore', { timeout: 120_000 }, () => {
  it('refuses while a server has the store open, and over data without --force; restores with --force once stopped', async () => {
    const source = dataDir()
    expect((await runCli(['user', 'create', '@old', '--init', '--password', 'old password 12'], { DATA_DIR: source })).code).toBe(0)
    expect((await runCli(['project', 'create', '@old/kept'], { DATA_DIR: source })).code).toBe(0)
    const backupFile = join(dataDir(), 'old.sqlite')
    expect((await runCli(['backup', '--out', backupFile], { DATA_DIR: source })).code).toBe(0)

    const dir = dataDir()
    const server = await start(dir, { SIGNUP: 'open' })
    await ownerWithProject(server.url, 'current')
    const storePath = join(dir, 'contentd.sqlite')
    const inUse = await runCli(['restore', backupFile, '--force'], { DATA_DIR: dir })
    expectRefusal(inUse, /store at .* is in use .*stop it first; nothing changed/)
    // The server never noticed: it serves, and its data is its own.
    expect((await call(server.url, 'POST', '/api/auth/login', { body: { username: 'current', password: 'correct horse battery staple' } })).status).toBe(200)
    expect(await server.stop('SIGTERM')).toBe(0)

    const before = digest(storePath)
    expectRefusal(await runCli(['restore', backupFile], { DATA_DIR: dir }), /holds 1 user and 1 project; add --force to replace them; nothing changed/)
    expect(digest(storePath)).toBe(before)
    expect(readdirSync(dir).sort()).toEqual(['contentd.sqlite'])

    const restored = await runCli(['restore', backupFile, '--force'], { DATA_DIR: dir })
    expect(restored.code, restored.stderr).toBe(0)
    expect(restored.stdout).toMatch(/^Restored .*old\.sqlite into .*contentd\.sqlite \(\d+ bytes; 1 users, 1 projects\)\n$/)
    const after = await start(dir)
    expect((await call(after.url, 'POST', '/api/auth/login', { body: { username: 'old', password: 'old password 12' } })).status).toBe(200)
    expect((await call(after.url, 'POST', '/api/auth/login', { body: { username: 'current', password: 'correct horse battery staple' } })).status).toBe(401)
  })

  it('restores into an empty DATA_DIR without --force', async () => {
    const source = dataDir()
    expect((await runCli(['user', 'create', '@solo', '--init', '--password', 'solo password 1'], { DATA_DIR: source })).code).toBe(0)
    const backupFile = join(dataDir(), 'solo.sqlite')
    expect((await runCli(['backup', '--out', backupFile], { DATA_DIR: source })).code).toBe(0)
    const dir = join(dataDir(), 'fresh')
    const run = await runCli(['restore', backupFile], { DATA_DIR: dir })
    expect(run.code, run.stderr).toBe(0)
    expect((await runCli(['user', 'list'], { DATA_DIR: dir })).stdout).toMatch(/^@solo\t/)
  })

  it('refuses a missing, empty, truncated, corrupted or foreign file with one line, and changes nothing', async () => {
    const source = dataDir()
    expect((await runCli(['user', 'create', '@src', '--init', '--password', 'src password 12'], { DATA_DIR: source })).code).toBe(0)
    expect((await runCli(['project', 'create', '@src/big'], { DATA_DIR: source })).code).toBe(0)
    // Enough content for several pages, so a cut or a scribble lands in real data.
    const big = JSON.stringify({ text: 'x'.repeat(60_000), list: Array.from({ length: 2000 }, (_, i) => i) })
    expect((await runCli(['import', '@src/big'], { DATA_DIR: source }, big)).code).toBe(0)
    const files = dataDir()
    const good = join(files, 'good.sqlite')
    expect((await runCli(['backup', '--out', good], { DATA_DIR: source })).code).toBe(0)
    const size = readFileSync(good).length

    const truncated = join(files, 'truncated.sqlite')
    copyFileSync(good, truncated)
    truncateSync(truncated, Math.floor(size / 2))
    const corrupted = join(files, 'corrupted.sqlite')
    const bytes = readFileSync(good)
    // Scribble over the cell pointers of a b-tree page (the file's header stays right). A
    // scribble inside a stored value would pass: SQLite keeps no checksums of data.
    const pageSize = bytes.readUInt16BE(16)
    let page = 1
    while (![0x02, 0x05, 0x0a, 0x0d].includes(bytes[page * pageSize] as number)) page++
    bytes.fill(0x58, page * pageSize + 8, page * pageSize + 200)
    writeFileSync(corrupted, bytes)
    const empty = join(files, 'empty.sqlite')
    writeFileSync(empty, '')
    const text = join(files, 'notes.txt')
    writeFileSync(text, 'not a database at all\n')
    const foreign = join(files, 'foreign.sqlite')
    const other = new Database(foreign)
    other.exec('CREATE TABLE things (id INTEGER)')
    other.close()

    const dir = dataDir()
    expect((await runCli(['user', 'create', '@here', '--init', '--password', 'here password 1'], { DATA_DIR: dir })).code).toBe(0)
    const storePath = join(dir, 'contentd.sqlite')
    const before = digest(storePath)
    const cases: Array<[string, RegExp]> = [
      [join(files, 'missing.sqlite'), /missing\.sqlite does not exist; nothing changed$/],
      [files, /is not a file; nothing changed$/],
      [empty, /empty\.sqlite is not an SQLite database \(it is empty\); nothing changed$/],
      [text, /notes\.txt is not an SQLite database; nothing changed$/],
      [truncated, new RegExp(`truncated\\.sqlite is truncated: ${Math.floor(size / 2)} bytes, its header says ${size}; nothing changed$`)],
      [corrupted, /corrupted\.sqlite is corrupted \(.+\); nothing changed$/],
      [foreign, /foreign\.sqlite is an SQLite file but not a contentd store; nothing changed$/]
    ]
    for (const [file, message] of cases) {
      const run = await runCli(['restore', file, '--force'], { DATA_DIR: dir })
      expectRefusal(run, /^contentd: cannot restore: /)
      expect(run.stderr.trim(), file).toMatch(message)
      expect(run.stderr).not.toMatch(/\n\s+at /)
      expect(digest(storePath), `${file}: the store is untouched`).toBe(before)
      expect(readdirSync(dir).sort(), `${file}: nothing left behind`).toEqual(['contentd.sqlite'])
    }
    // And the good one goes in.
    expect((await runCli(['restore', good, '--force'], { DATA_DIR: dir })).code).toBe(0)
    expect((await runCli(['export', '@src/big'], { DATA_DIR: dir })).stdout.trim()).toBe(big)
  })

  it('refuses over a store that cannot be read, saying to move it aside; restored into its place, never replays a WAL left beside it', async () => {
    const source = dataDir()
    expect((await runCli(['user', 'create', '@saved', '--init', '--password', 'saved password 1'], { DATA_DIR: source })).code).toBe(0)
    const backupFile = join(dataDir(), 'saved.sqlite')
    expect((await runCli(['backup', '--out', backupFile], { DATA_DIR: source })).code).toBe(0)

    /** A DATA_DIR with data whose server was stopped, or killed (its WAL then full of committed pages). */
    const usedStore = async (signal: 'SIGTERM' | 'SIGKILL'): Promise<string> => {
      const dir = dataDir()
      const used = await start(dir)
      const { key, path } = await ownerWithProject(used.url, 'lost')
      for (let i = 0; i < 50; i++) expect((await call(used.url, 'POST', `${path}/content/push`, { token: key, body: { path: 'log', value: 'x'.repeat(2000) } })).status).toBe(200)
      await used.stop(signal)
      expect(existsSync(join(dir, 'contentd.sqlite-wal'))).toBe(signal === 'SIGKILL')
      return dir
    }
    const expectRestored = async (dir: string): Promise<void> => {
      const storePath = join(dir, 'contentd.sqlite')
      expect(readdirSync(dir).filter(name => name.startsWith('contentd.sqlite-')), 'no -wal or -shm left').toEqual([])
      const after = await start(dir)
      expect((await call(after.url, 'POST', '/api/auth/login', { body: { username: 'saved', password: 'saved password 1' } })).status).toBe(200)
      expect((await call(after.url, 'POST', '/api/auth/login', { body: { username: 'lost', password: 'correct horse battery staple' } })).status).toBe(401)
      expect(await after.stop('SIGTERM')).toBe(0)
      const check = new Database(storePath, { readonly: true })
      expect(check.pragma('integrity_check', { simple: true })).toBe('ok')
      expect(check.prepare('SELECT username FROM users').pluck().all()).toEqual(['saved'])
      check.close()
    }

    // A bad deploy writes over the store: refused even with --force (nobody can tell whether a
    // process has garbage open), saying what to do; nothing changed.
    const overwritten = await usedStore('SIGTERM')
    const storePath = join(overwritten, 'contentd.sqlite')
    writeFileSync(storePath, Buffer.alloc(8192, 0x41))
    const before = digest(storePath)
    expectRefusal(await runCli(['restore', backupFile, '--force'], { DATA_DIR: overwritten }),
      /the store at (.*contentd\.sqlite) cannot be read \(file is not a database\), so whether a process has it open cannot be told: stop the servers, move it aside \(mv \1 \1\.damaged\) and restore again; nothing changed\n$/)
    expect(digest(storePath)).toBe(before)
    renameSync(storePath, `${storePath}.damaged`)
    const replaced = await runCli(['restore', backupFile], { DATA_DIR: overwritten })
    expect(replaced.code, replaced.stderr).toBe(0)
    await expectRestored(overwritten)

    // After a crash, the store moved aside, its WAL left behind: a restore into the empty place.
    const movedAside = await usedStore('SIGKILL')
    renameSync(join(movedAside, 'contentd.sqlite'), join(movedAside, 'damaged.sqlite'))
    const restored = await runCli(['restore', backupFile], { DATA_DIR: movedAside })
    expect(restored.code, restored.stderr).toBe(0)
    await expectRestored(movedAside)
  })

  it('is refused with STORE=mongodb, pointing at MongoDB\'s own tools', async () => {
    const dir = dataDir()
    mkdirSync(dir, { recursive: true })
    const env = { DATA_DIR: dir, STORE: 'mongodb', MONGODB_URI: 'mongodb://127.0.0.1:1/contentd' }
    expectRefusal(await runCli(['backup'], env), /for MongoDB use mongodump/)
    expectRefusal(await runCli(['restore', join(dir, 'x.sqlite')], env), /for MongoDB use mongorestore/)
    expect(existsSync(join(dir, 'backups'))).toBe(false)
  })
})
