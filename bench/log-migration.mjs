// How long the migration that rebuilds the change log as a rowid table takes at first start
// (server/store/sqlite/migrations.ts, "The change log as a rowid table"), and the disk it
// needs: a store at the previous schema (the released migrations) with BENCH_LOG_MB of log in
// entries of BENCH_ENTRY_BYTES over BENCH_PROJECTS projects, half of them without a kept size
// (NULL, as the release before sizes left them), then opened as the server opens it
// (openDatabase: WAL, foreign keys, the migrations in one IMMEDIATE transaction).
//   node bench/log-migration.mjs [root]   (root: a tree with dist/, default this one; run `npm run build` first)
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(process.argv[2] ?? join(fileURLToPath(import.meta.url), '../..'))
const logBytes = Number(process.env.BENCH_LOG_MB ?? 200) * 1024 * 1024
const entryBytes = Number(process.env.BENCH_ENTRY_BYTES ?? 1024)
const projects = Number(process.env.BENCH_PROJECTS ?? 100)

const { default: Database } = await import(join(root, 'node_modules/better-sqlite3/lib/index.js'))
const { MIGRATIONS } = await import(join(root, 'dist/server/store/sqlite/migrations.js'))
const { openDatabase } = await import(join(root, 'dist/server/store/sqlite/database.js'))

const dataDir = mkdtempSync(join(tmpdir(), 'contentd-bench-log-migration-'))
const file = join(dataDir, 'contentd.sqlite')
const size = path => { try { return statSync(path).size } catch { return 0 } }
const mib = bytes => (bytes / 1024 / 1024).toFixed(1)
try {
  const old = new Database(file)
  old.pragma('journal_mode = WAL')
  old.transaction(() => {
    for (const migration of MIGRATIONS.slice(0, -1)) {
      if (typeof migration === 'string') old.exec(migration)
      else migration(old)
    }
    old.pragma(`user_version = ${MIGRATIONS.length - 1}`)
  })()
  old.prepare("INSERT INTO users (id, username, password_hash, created_at) VALUES ('usr_bench', 'bench', 'x', '2026-01-01')").run()
  const insertProject = old.prepare("INSERT INTO projects (id, owner_id, slug, name, created_at) VALUES (?, 'usr_bench', ?, ?, '2026-01-01')")
  const insertEntry = old.prepare('INSERT INTO changes (project_id, version, entry, bytes) VALUES (?, ?, ?, ?)')
  const entries = Math.ceil(logBytes / entryBytes)
  const perProject = Math.ceil(entries / projects)
  // An entry as the log holds it (no `project` member), padded to entryBytes.
  const head = '{"version":0,"op":"set","path":"a.b","at":"2026-11-27T12:00:00.000Z","actor":{"type":"key","id":"key_0123456789abcdef","name":"bench"},"value":"'
  const entryOf = version => {
    const text = head.replace('"version":0', `"version":${version}`)
    return text + 'x'.repeat(Math.max(0, entryBytes - text.length - 2)) + '"}'
  }
  const started = performance.now()
  old.transaction(() => {
    for (let p = 0; p < projects; p++) {
      const id = `prj_${String(p).padStart(20, '0')}`
      insertProject.run(id, `p${p}`, `p${p}`)
      for (let v = 1; v <= perProject; v++) {
        const entry = entryOf(v)
        insertEntry.run(id, v, entry, v % 2 === 0 ? Buffer.byteLength(entry) : null)
      }
    }
  })()
  old.pragma('wal_checkpoint(TRUNCATE)')
  const logPages = old.prepare("SELECT sum(pgsize) FROM dbstat WHERE name IN ('changes', 'changes_by_size')").pluck().get()
  old.close()
  const before = size(file)
  console.log(`previous schema: ${projects * perProject} entries of ${entryBytes} B, log (changes + changes_by_size) ${mib(logPages)} MiB, file ${mib(before)} MiB (built in ${((performance.now() - started) / 1000).toFixed(1)} s)`)

  const t0 = performance.now()
  const db = openDatabase(dataDir, 5000)
  const seconds = (performance.now() - t0) / 1000
  // openDatabase has checkpointed the WAL (the rewrite, as large as the new log) into the file
  // and truncated it: the most disk the start held was about the file now plus that WAL.
  const wal = size(`${file}-wal`)
  const after = size(file)
  const newLog = db.prepare("SELECT sum(pgsize) FROM dbstat WHERE name IN ('changes', 'changes_by_version')").pluck().get()
  const free = db.pragma('freelist_count', { simple: true }) * db.pragma('page_size', { simple: true })
  db.close()
  console.log(`migration: ${seconds.toFixed(1)} s (${(seconds * 1024 * 1024 * 1024 / logPages).toFixed(0)} s per GiB of log, ${Math.round(projects * perProject / seconds)} entries/s); new log ${mib(newLog)} MiB`)
  console.log(`disk: file ${mib(before)} MiB before, ${mib(after)} MiB after (free pages ${mib(free)} MiB, reused by later writes), WAL left ${mib(wal)} MiB; at most about ${mib(after + newLog)} MiB during the start`)
} finally {
  rmSync(dataDir, { recursive: true, force: true })
}
