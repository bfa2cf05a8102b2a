// `contentd backup` and `contentd restore` (docs/design.md §18, docs/operations.md#backups).
// They act on the embedded store's file, not through the Store: a backup is an SQLite copy
// taken beside a running server; a restore replaces the file while nothing has it open.
import { mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { restoreBackup } from '../backup/restore.js'
import { backupDatabase, backupFileName, BackupError } from '../backup/sqlite-backup.js'
import type { Config } from '../config.js'
import { sqliteFile } from '../store/sqlite/file.js'

/** A refusal of backup or restore: one line, exit 1. */
export class BackupCommandError extends Error {}

export async function backupCommand (config: Config, out: string | undefined): Promise<string> {
  refuseMongo(config, 'backup', 'mongodump')
  let destination: string
  if (out === undefined) {
    const dir = config.backup.dir ?? join(config.dataDir, 'backups')
    mkdirSync(dir, { recursive: true })
    destination = join(dir, backupFileName(new Date()))
  } else {
    destination = out
  }
  try {
    const { path, bytes } = await backupDatabase(sqliteFile(config.dataDir), resolve(destination))
    return `Backed up ${sqliteFile(config.dataDir)} to ${path} (${bytes} bytes, integrity ok)`
  } catch (error) {
    if (error instanceof BackupError) throw new BackupCommandError(error.message)
    throw error
  }
}

export function restoreCommand (config: Config, file: string, force: boolean): string {
  refuseMongo(config, 'restore', 'mongorestore')
  try {
    const restored = restoreBackup({ dataDir: config.dataDir, file, force })
    return `Restored ${file} into ${restored.path} (${restored.bytes} bytes; ${restored.users} users, ${restored.projects} projects)`
  } catch (error) {
    if (error instanceof BackupError) throw new BackupCommandError(`cannot restore: ${error.message}`)
    throw error
  }
}

function refuseMongo (config: Config, command: string, tool: string): void {
  if (config.store === 'mongodb') {
    throw new BackupCommandError(`${command} works on the embedded store (STORE=sqlite); for MongoDB use ${tool} (docs/operations.md#backups)`)
  }
}

