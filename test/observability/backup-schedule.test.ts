// Scheduled backups (docs/design.md §18) in a real server process under a write load:
// BACKUP_INTERVAL, BACKUP_KEEP (only contentd-*.sqlite files count and are pruned), the last
// good backup's time in /readyz and as a metric, and a failing BACKUP_DIR: logged, counted,
// the server serving on, and backups resuming once it is usable again.
import { mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { startLoad } from '../durability/load.js'
import { call, ownerWithProject } from '../support/http.js'
import { metricValue } from '../support/metrics.js'
import { makeDataDir, startServerProcess, type ServerProcess } from '../support/server-process.js'
import { until } from '../support/wait.js'

const dataDir = makeDataDir()
const root = makeDataDir()
const backupDir = join(root, 'backups')
const METRICS_TOKEN = 'backup-schedule-metrics-token'
let server: ServerProcess | undefined

afterAll(async () => {
  await server?.stop('SIGKILL')
  rmSync(dataDir, { recursive: true, force: true })
  rmSync(root, { recursive: true, force: true })
})

const BACKUP = /^contentd-.+\.sqlite$/
const named = () => readdirSync(backupDir).filter(name => BACKUP.test(name)).sort()

async function lastAt (url: string): Promise<string | null> {
  const ready = await call(url, 'GET', '/readyz')
  expect(ready.status).toBe(200)
  return ready.body.backup.lastAt as string | null
}

/** Waits until /readyz reports `count` more good backups than `since` did. */
async function backupsAfter (url: string, since: string | null, count: number): Promise<string> {
  let seen = since
  let taken = 0
  for (const deadline = Date.now() + 60_000; taken < count;) {
    if (Date.now() > deadline) throw new Error(`only ${taken} of ${count} backups within 60 s`)
    const now = await lastAt(url)
    if (now !== seen) { taken++; seen = now }
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  return seen as string
}

describe('scheduled backups', () => {
  it('backs up every BACKUP_INTERVAL under load, keeps BACKUP_KEEP, reports the last good one, and survives a failing BACKUP_DIR', { timeout: 180_000 }, async () => {
    mkdirSync(backupDir)
    // Not ours: never counted, never pruned. An old backup of ours: pruned once newer ones exist.
    writeFileSync(join(backupDir, 'notes.txt'), 'operator notes\n')
    writeFileSync(join(backupDir, 'contentd-2020-01-01T00-00-00.000Z.sqlite'), 'an old backup\n')
    server = await startServerProcess({
      dataDir,
      env: { BACKUP_DIR: backupDir, BACKUP_INTERVAL: '1s', BACKUP_KEEP: '2', METRICS_TOKEN }
    })
    const { key, path } = await ownerWithProject(server.url, 'scheduled')
    const load = startLoad(server.url, key, path, 's', 8)
    try {
      const newest = await backupsAfter(server.url, await lastAt(server.url), 3)
      expect(load.tally.pushesAcked.size, 'writes acknowledged while backups ran').toBeGreaterThan(0)
      const files = named()
      expect(files, 'the newest BACKUP_KEEP backups are kept').toHaveLength(2)
      expect(files).not.toContain('contentd-2020-01-01T00-00-00.000Z.sqlite')
      expect(readdirSync(backupDir)).toContain('notes.txt')
      for (const file of files) {
        const copy = new Database(join(backupDir, file), { readonly: true })
        expect(copy.pragma('integrity_check', { simple: true }), file).toBe('ok')
        expect(copy.prepare('SELECT count(*) FROM users').pluck().get()).toBe(1)
        copy.close()
      }
      // The time reported is the moment the newest kept backup began (its name), also as a metric.
      const current = await lastAt(server.url)
      expect(Date.parse(current as string)).toBeGreaterThanOrEqual(Date.parse(newest))
      const seconds = await metricValue(server.url, METRICS_TOKEN, 'contentd_backup_last_success_timestamp_seconds')
      expect(seconds * 1000).toBeGreaterThanOrEqual(Date.parse(newest))
      expect(await metricValue(server.url, METRICS_TOKEN, 'contentd_backup_failures_total')).toBe(0)

      // BACKUP_DIR becomes unusable (a file where the directory was): backups fail, are
      // logged and counted; the server goes on serving and reports the last good one.
      renameSync(backupDir, `${backupDir}.away`)
      writeFileSync(backupDir, 'not a directory')
      const lastGood = await lastAt(server.url)
      await until(() => server!.output().includes('backup failed'), 'a failed backup logged', 30_000)
      expect(await metricValue(server.url, METRICS_TOKEN, 'contentd_backup_failures_total')).toBeGreaterThanOrEqual(1)
      expect(await lastAt(server.url)).toBe(lastGood)
      const acked = load.tally.pushesAcked.size
      await until(() => load.tally.pushesAcked.size > acked + 20, 'writes acknowledged after the failure', 30_000)
      expect(server.child.exitCode).toBe(null)

      // Usable again: backups resume.
      rmSync(backupDir)
      renameSync(`${backupDir}.away`, backupDir)
      const resumed = await backupsAfter(server.url, lastGood, 1)
      expect(Date.parse(resumed)).toBeGreaterThan(Date.parse(lastGood as string))
    } finally {
      await load.stop()
    }
    console.log(`scheduled backups: ${load.tally.pushesAcked.size} pushes acknowledged meanwhile`)
  })

  it('reports the newest backup already in BACKUP_DIR after a restart, before taking one', { timeout: 60_000 }, async () => {
    await server?.stop('SIGTERM')
    const newest = named().at(-1) as string
    // A long interval: the next one is due a day after the newest, so none is taken now.
    server = await startServerProcess({ dataDir, env: { BACKUP_DIR: backupDir, BACKUP_INTERVAL: '1d', METRICS_TOKEN } })
    const iso = newest.replace(/^contentd-/, '').replace(/\.sqlite$/, '').replace(/T(\d{2})-(\d{2})-(\d{2})/, 'T$1:$2:$3')
    expect(await lastAt(server.url)).toBe(iso)
    expect(await metricValue(server.url, METRICS_TOKEN, 'contentd_backup_last_success_timestamp_seconds')).toBe(Date.parse(iso) / 1000)
    expect(named().at(-1)).toBe(newest)
  })
})
