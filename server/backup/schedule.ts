// Scheduled backups in the server (docs/design.md §18): with BACKUP_DIR set, a backup every
// BACKUP_INTERVAL, keeping the newest BACKUP_KEEP contentd-*.sqlite files. Each runs on a
// worker thread (backup-worker.ts), so the event loop never waits for the disk. A failed
// backup is logged and counted, and the next is tried an interval later; it never stops
// the server. The last good backup's time is what /readyz and the metric report: at start,
// the newest contentd-*.sqlite already in BACKUP_DIR (a file gets that name only once it
// passed its checks), then each good one this process takes, by the moment it began.
import { mkdirSync, readdirSync, unlinkSync } from 'node:fs'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import type { Logger } from '../logger.js'
import type { Metrics } from '../observability/metrics.js'
import { backupFileName, backupTimeOf, type BackupResult } from './sqlite-backup.js'

/** setTimeout's longest delay; longer intervals are waited for in steps. */
const LONGEST_TIMER_MS = 2 ** 31 - 1

/** What /readyz reads. */
export interface BackupStatus {
  lastSuccessAt (): Date | null
}

export interface BackupScheduleOptions {
  /** The store file to copy. */
  source: string
  dir: string
  intervalMs: number
  keep: number
  logger: Logger
  metrics: Metrics
  /** Takes one backup; by default on a worker thread. Tests of the schedule can swap it. */
  run?: (source: string, destination: string) => Promise<BackupResult>
}

export class BackupSchedule implements BackupStatus {
  private last: Date | null = null
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private stopped = false

  constructor (private readonly options: BackupScheduleOptions) {}

  lastSuccessAt (): Date | null { return this.last }

  /** The next backup is due an interval after the newest one in BACKUP_DIR, or now when there is none. */
  start (): void {
    mkdirSync(this.options.dir, { recursive: true })
    const newest = this.backups().at(-1)
    if (newest) this.succeeded(newest.at)
    const due = newest ? newest.at.getTime() + this.options.intervalMs : Date.now()
    this.arm(due)
  }

  /** Stops scheduling; resolves when a backup in progress has ended. */
  async stop (): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    await this.running
  }

  private arm (due: number): void {
    if (this.stopped) return
    const wait = Math.max(0, due - Date.now())
    this.timer = setTimeout(() => {
      if (Date.now() < due) { this.arm(due); return }
      this.running = this.takeOne().finally(() => { this.running = undefined })
    }, Math.min(wait, LONGEST_TIMER_MS))
    this.timer.unref()
  }

  private async takeOne (): Promise<void> {
    const began = new Date()
    const destination = join(this.options.dir, backupFileName(began))
    try {
      const result = await (this.options.run ?? backupOnWorker)(this.options.source, destination)
      this.succeeded(began)
      this.options.logger.info({ path: result.path, bytes: result.bytes, ms: Date.now() - began.getTime() }, 'backup taken')
      this.prune()
    } catch (error) {
      this.options.metrics.backupFailures.inc()
      this.options.logger.error({ err: error, path: destination }, 'backup failed')
    }
    this.arm(began.getTime() + this.options.intervalMs)
  }

  private succeeded (at: Date): void {
    if (this.last && this.last >= at) return
    this.last = at
    this.options.metrics.backupLastSuccess.set(at.getTime() / 1000)
  }

  /** Keeps the newest BACKUP_KEEP contentd-*.sqlite files; other files are never touched. */
  private prune (): void {
    const backups = this.backups()
    for (const old of backups.slice(0, Math.max(0, backups.length - this.options.keep))) {
      try {
        unlinkSync(join(this.options.dir, old.name))
      } catch (error) {
        this.options.logger.warn({ err: error, path: old.name }, 'could not remove an old backup')
      }
    }
  }

  /** The backups in BACKUP_DIR, oldest first. */
  private backups (): Array<{ name: string, at: Date }> {
    return readdirSync(this.options.dir)
      .flatMap(name => { const at = backupTimeOf(name); return at ? [{ name, at }] : [] })
      .sort((a, b) => a.at.getTime() - b.at.getTime())
  }
}

function backupOnWorker (source: string, destination: string): Promise<BackupResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./backup-worker.js', import.meta.url), { workerData: { source, destination } })
    let answered = false
    worker.once('message', (message: { ok: true, result: BackupResult } | { ok: false, message: string }) => {
      answered = true
      if (message.ok) resolve(message.result)
      else reject(new Error(message.message))
    })
    worker.once('error', reject)
    worker.once('exit', code => { if (!answered) reject(new Error(`the backup worker exited with code ${code}`)) })
  })
}
