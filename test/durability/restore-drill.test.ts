// The restore drill (docs/design.md §18): a real server process takes writes on two
// projects under load; the built CLI backs the store up meanwhile; the writes go on; the
// server is killed with SIGKILL (its -wal and -shm left behind, no process holding them);
// the backup is restored (refused without --force: the dead store still holds data) and a
// server started on it. Every write acknowledged before the backup began is there, nothing
// that was never sent, writes acknowledged after the backup ended are not (the store is the
// backup), and for each project the change log agrees with the content (log-agrees.ts).
import { existsSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runCli } from '../support/cli-process.js'
import { call, ownerWithProject } from '../support/http.js'
import { expectLogAgrees } from '../support/log-agrees.js'
import { makeDataDir, startServerProcess, type ServerProcess } from '../support/server-process.js'
import { until } from '../support/wait.js'
import { startLoad, type Load } from './load.js'

const dataDir = makeDataDir()
const backupDir = makeDataDir()
const env = { HISTORY_LIMIT: '0' }
let server: ServerProcess | undefined

afterAll(async () => {
  await server?.stop('SIGKILL')
  rmSync(dataDir, { recursive: true, force: true })
  rmSync(backupDir, { recursive: true, force: true })
})

interface Writer {
  key: string
  path: string
  load: Load
  /** Acknowledged before the backup started: must all survive. */
  pushesBefore: Set<string>
  incrementsBefore: number
  /** Acknowledged once the backup had ended: must all be gone. */
  pushesAfter: string[]
}

describe('restore drill', () => {
  it('write under load, back up, keep writing, kill -9, restore: everything acknowledged before the backup began is there, and the store agrees with itself', { timeout: 180_000 }, async () => {
    server = await startServerProcess({ dataDir, env })
    const writers: Writer[] = []
    for (const name of ['drill-a', 'drill-b']) {
      const { key, path } = await ownerWithProject(server.url, name)
      writers.push({ key, path, load: startLoad(server.url, key, path, name, 8), pushesBefore: new Set(), incrementsBefore: 0, pushesAfter: [] })
    }
    await until(() => writers.every(w => w.load.tally.pushesAcked.size >= 150), 'writes acknowledged on both projects', 60_000)

    for (const w of writers) {
      w.pushesBefore = new Set(w.load.tally.pushesAcked)
      w.incrementsBefore = w.load.tally.incrementsAcked
    }
    const out = join(backupDir, 'drill.sqlite')
    const backup = await runCli(['backup', '--out', out], { DATA_DIR: dataDir })
    expect(backup.code, backup.stderr).toBe(0)
    const ackedAtBackupEnd = writers.map(w => new Set(w.load.tally.pushesAcked))
    await until(() => writers.every((w, i) => w.load.tally.pushesAcked.size >= (ackedAtBackupEnd[i] as Set<string>).size + 50), 'writes after the backup', 60_000)

    await server.stop('SIGKILL')
    for (const [i, w] of writers.entries()) {
      await w.load.stop()
      w.pushesAfter = [...w.load.tally.pushesAcked].filter(tag => !(ackedAtBackupEnd[i] as Set<string>).has(tag))
      console.log(`${w.path}: ${w.pushesBefore.size} pushes acknowledged before the backup, ${w.load.tally.pushesAcked.size} in all`)
    }
    // Killed: the WAL and its index are still there, but no process has the store open.
    expect(existsSync(join(dataDir, 'contentd.sqlite-wal'))).toBe(true)

    const refused = await runCli(['restore', out], { DATA_DIR: dataDir })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/holds 2 users and 2 projects; add --force/)
    const restored = await runCli(['restore', out, '--force'], { DATA_DIR: dataDir })
    expect(restored.code, restored.stderr).toBe(0)
    expect(readdirSync(dataDir).sort()).toEqual(['contentd.sqlite'])

    server = await startServerProcess({ dataDir, env })
    for (const w of writers) {
      const content = await call(server.url, 'GET', `${w.path}/content`, { token: w.key })
      expect(content.status).toBe(200)
      const stored = content.body.log as string[]
      const storedSet = new Set(stored)
      expect(storedSet.size, 'no element stored twice').toBe(stored.length)
      expect([...w.pushesBefore].filter(tag => !storedSet.has(tag)), `${w.path}: acknowledged before the backup, missing`).toEqual([])
      expect(stored.filter(tag => !w.load.tally.pushesSent.has(tag)), `${w.path}: stored, never sent`).toEqual([])
      expect(w.pushesAfter.length).toBeGreaterThan(0)
      expect(w.pushesAfter.filter(tag => storedSet.has(tag)), `${w.path}: acknowledged after the backup ended, yet restored`).toEqual([])
      expect(content.body.counter).toBeGreaterThanOrEqual(w.incrementsBefore)
      expect(content.body.counter).toBeLessThanOrEqual(w.load.tally.incrementsSent)
      await expectLogAgrees(server.url, w.key, w.path, `restored ${w.path}`)
      // The restored store takes writes again, from its own version on.
      const version = Number(JSON.parse(content.headers.get('etag') as string))
      const next = await call(server.url, 'POST', `${w.path}/content/increment`, { token: w.key, body: { path: 'counter' } })
      expect(next.status).toBe(200)
      expect(Number(JSON.parse(next.headers.get('etag') as string))).toBe(version + 1)
    }
  })
})
