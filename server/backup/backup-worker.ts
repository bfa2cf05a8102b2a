// Runs one backup (sqlite-backup.ts) on a worker thread, so the server's event loop keeps
// serving while the backup API copies the whole file, step after synced step (schedule.ts).
import { parentPort, workerData } from 'node:worker_threads'
import { backupDatabase } from './sqlite-backup.js'

const { source, destination } = workerData as { source: string, destination: string }
backupDatabase(source, destination).then(
  result => parentPort?.postMessage({ ok: true, result }),
  (error: unknown) => parentPort?.postMessage({ ok: false, message: error instanceof Error ? error.message : String(error) })
)
