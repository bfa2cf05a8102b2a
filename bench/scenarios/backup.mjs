// A backup under load (issue 32): a store of BENCH_BACKUP_MIB MiB (default 1024), built through
// the API; @bob increments a counter at a steady 50 requests per second, first quietly, then
// while `contentd backup --out FILE` runs as its own process (the CLI, as an operator runs it).
// Then `cp` of the same store file, for scale. The goals: bob's p99 during the backup within
// 2× his quiet p99, and the backup's wall time within 3× the `cp`'s.
// For the floor of the method (DESIGN §18: SQLite's backup API, never a file copy), the same
// file is then copied by the backup API alone, in this process (no Node start-up, no check,
// no fsync), and by `dd bs=4k` (read(2)/write(2) of 4 KiB pages, as SQLite's pager writes):
// what `cp` does faster is copy in the kernel (copy_file_range), which neither can.
//   BENCH_BACKUP_MIB=1024   size of the store to build (contentd.sqlite after a WAL checkpoint)
import { spawn } from 'node:child_process'
import { rmSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { call, expectStatus, owner, startContentd } from '../lib/contentd.mjs'
import { documentOfSize } from '../lib/documents.mjs'
import { DURATION_S } from '../lib/load.mjs'
import { summary } from '../lib/percentiles.mjs'
import { PROJECT_ROOT, tempDir } from '../lib/processes.mjs'
import { victimPhase } from '../lib/victim.mjs'

const MiB = 1024 * 1024
const TARGET_BYTES = Number(process.env.BENCH_BACKUP_MIB ?? 1024) * MiB
const PACE_MS = 20
const QUIET_MS = Math.max(2, DURATION_S) * 1000
// Each `set` carries ~900 KB of records (under the 1 MiB BODY_LIMIT) at its own path, 8 per
// project (~7 MB, under the 8 MiB CONTENT_LIMIT); 4 writers at once.
const VALUE_BYTES = 900_000
const SETS_PER_PROJECT = 8
const WRITERS = 4
const CP_RUNS = 3

/** Folds the WAL into the store file, so the file alone is the whole store (what cp copies). */
function checkpoint (storeFile) {
  const Database = createRequire(join(PROJECT_ROOT, 'package.json'))('better-sqlite3')
  const db = new Database(storeFile)
  try {
    db.pragma('busy_timeout = 5000')
    return db.pragma('wal_checkpoint(TRUNCATE)')[0]
  } finally { db.close() }
}

const sizeOf = file => { try { return statSync(file).size } catch { return 0 } }

/** Writes ~900 KB sets into fresh projects of @filler until the store and its WAL reach `TARGET_BYTES`. */
async function fillStore (base, storeFile) {
  const filler = await owner(base, 'filler')
  const value = documentOfSize(VALUE_BYTES)
  let projects = 0
  const started = performance.now()
  const full = () => sizeOf(storeFile) + sizeOf(storeFile + '-wal') >= TARGET_BYTES
  await Promise.all(Array.from({ length: WRITERS }, async () => {
    while (!full()) {
      const path = await filler.project(`p${projects++}`)
      for (let i = 0; i < SETS_PER_PROJECT && !full(); i++) {
        await expectStatus(call(base, 'POST', `${path}/content/set`, { token: filler.key, body: { path: `part${i}`, value } }), 200, 'set')
      }
    }
  }))
  return { projects, seconds: (performance.now() - started) / 1000 }
}

/** Runs `command args` to its end: its wall time in seconds; throws on a non-zero exit. */
function timed (command, args, env = {}) {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(command, args, { cwd: PROJECT_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', chunk => { output += chunk })
    child.stderr.on('data', chunk => { output += chunk })
    child.once('error', reject)
    child.once('exit', code => code === 0 ? resolve({ seconds: (performance.now() - started) / 1000, output }) : reject(new Error(`${command} ${args.join(' ')} exited with ${code}: ${output.slice(-500)}`)))
  })
}

/**
 * The fastest the backup's copy can be by its method: SQLite's backup API in one step, as
 * server/backup/sqlite-backup.ts calls it (the source read through a memory map), without
 * the CLI's start-up, the check or the fsync; and `dd bs=4k`, plain reads and writes of
 * pages. Best of CP_RUNS each, seconds.
 */
async function methodFloor (storeFile, outDir) {
  const Database = createRequire(join(PROJECT_ROOT, 'package.json'))('better-sqlite3')
  const backupApi = []
  const dd = []
  for (let i = 0; i < CP_RUNS; i++) {
    const copy = join(outDir, `floor-${i}.sqlite`)
    const db = new Database(storeFile)
    try {
      db.pragma(`mmap_size = ${2 ** 31}`)
      const started = performance.now()
      await db.backup(copy, { progress: () => 0x7fffffff })
      backupApi.push((performance.now() - started) / 1000)
    } finally { db.close() }
    rmSync(copy, { force: true })
    dd.push((await timed('dd', [`if=${storeFile}`, `of=${copy}`, 'bs=4k', 'status=none'])).seconds)
    rmSync(copy, { force: true })
  }
  return { backupApi: Math.min(...backupApi), dd: Math.min(...dd) }
}

export async function backup () {
  const server = await startContentd()
  const outDir = tempDir('backup-out')
  try {
    const storeFile = join(server.dataDir, 'contentd.sqlite')
    const filled = await fillStore(server.url, storeFile)
    checkpoint(storeFile)
    const storeBytes = sizeOf(storeFile)
    process.stderr.write(`bench: backup: store of ${(storeBytes / MiB).toFixed(0)} MiB (${filled.projects} projects) built in ${filled.seconds.toFixed(0)} s\n`)

    const bob = await owner(server.url, 'bob')
    const path = await bob.project('counter', documentOfSize(1024))
    // Warm-up: JIT and caches, for bob's requests.
    await victimPhase(server.url, bob.key, path, 2000, PACE_MS)
    const quiet = await victimPhase(server.url, bob.key, path, QUIET_MS, PACE_MS)

    // During the backup: bob's increments in short phases, back to back, until the CLI exits.
    const during = { latencies: [], failures: 0 }
    let running = true
    const backupFile = join(outDir, 'backup.sqlite')
    const backupRun = timed(process.execPath, [join(PROJECT_ROOT, 'dist/server/cli/main.js'), 'backup', '--out', backupFile], { DATA_DIR: server.dataDir, LOG_LEVEL: 'warn' })
      .finally(() => { running = false })
    while (running) {
      const phase = await victimPhase(server.url, bob.key, path, 250, PACE_MS)
      during.latencies.push(...phase.latencies)
      during.failures += phase.failures
    }
    const { seconds: backupSeconds } = await backupRun
    const backupBytes = sizeOf(backupFile)
    rmSync(backupFile, { force: true })

    // cp of the store file alone, after a checkpoint (the WAL folded in), best of 3: the first
    // run warms the page cache, so all read from memory, as the backup did right after the fill.
    checkpoint(storeFile)
    const copied = sizeOf(storeFile)
    const cpRuns = []
    for (let i = 0; i < CP_RUNS; i++) {
      const copy = join(outDir, `cp-${i}.sqlite`)
      cpRuns.push((await timed('cp', [storeFile, copy])).seconds)
      rmSync(copy, { force: true })
    }
    const cpSeconds = Math.min(...cpRuns)
    const floor = await methodFloor(storeFile, outDir)

    const q = summary(quiet.latencies)
    const d = summary(during.latencies)
    return {
      kind: 'backup',
      scenario: `backup of a ${(storeBytes / MiB).toFixed(0)} MiB store while @bob increments (1 every ${PACE_MS} ms)`,
      storeMiB: storeBytes / MiB,
      quietP99: q.p99,
      duringP99: d.p99,
      p99Ratio: d.p99 / q.p99,
      backupSeconds,
      cpSeconds,
      timeRatio: backupSeconds / cpSeconds,
      backupApiSeconds: floor.backupApi,
      ddSeconds: floor.dd,
      samples: `${q.samples} / ${d.samples}`,
      failed: quiet.failures + during.failures > 0 || backupBytes === 0 || storeBytes < 0.95 * TARGET_BYTES,
      note: `store built through the API in ${filled.seconds.toFixed(0)} s (${filled.projects} projects of ${SETS_PER_PROJECT} ~900 KB sets), size of contentd.sqlite after a WAL checkpoint; backup ${(backupBytes / MiB).toFixed(0)} MiB, wall time of the CLI process (Node start-up, integrity check and fsync included); cp of the ${(copied / MiB).toFixed(0)} MiB file after a checkpoint, best of ${CP_RUNS} (page cache warm, no fsync): ${cpRuns.map(s => s.toFixed(2)).join(', ')} s; the method's floor, best of ${CP_RUNS}: SQLite's backup API alone ${floor.backupApi.toFixed(2)} s (${(floor.backupApi / cpSeconds).toFixed(2)}× cp), dd bs=4k ${floor.dd.toFixed(2)} s (${(floor.dd / cpSeconds).toFixed(2)}× cp); bob's non-200 answers ${quiet.failures + during.failures}`
    }
  } finally {
    await server.stop()
    rmSync(outDir, { recursive: true, force: true })
  }
}
