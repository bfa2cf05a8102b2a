// What the change log writes per group commit, counted rather than timed (so it means the same
// on a shared machine): the 1 KiB increment through the embedded store, in group commits of
// BENCH_BATCH (default 16, about what 32 connections give), with HISTORY on and off, and the
// WAL frames (4 KiB pages) each commit wrote, by the b-tree they belong to. A frame is a page
// the commit wrote to the WAL and later copies into the file; its cost is in the COMMIT and
// in the fdatasync that makes it durable (BENCHMARKS.md, "What the benchmark changed").
//   node bench/log-frames.mjs [root]   (root: a tree with dist/, default this one; run `npm run build` first)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { documentOfSize } from './lib/documents.mjs'

const root = resolve(process.argv[2] ?? join(fileURLToPath(import.meta.url), '../..'))
const batch = Number(process.env.BENCH_BATCH ?? 16)
const counted = Number(process.env.BENCH_COMMITS ?? 300)
// Past the first bulk prunes of the default HISTORY_LIMIT, so retention is in what is counted.
const warmup = Number(process.env.BENCH_WARMUP_COMMITS ?? 800)
const FRAME_BYTES = 24 + 4096

const { SqliteStore } = await import(join(root, 'dist/server/store/sqlite/sqlite-store.js'))
const { CommitCounter } = await import(join(root, 'dist/server/store/sqlite/lookup-cache.js'))
const { validateOperation } = await import(join(root, 'dist/shared/validate-operation.js'))
const actor = { actor: { type: 'key', id: 'key_0123456789abcdef', name: 'bench' } }

async function framesPerCommit (enabled) {
  const dataDir = mkdtempSync(join(tmpdir(), 'contentd-bench-frames-'))
  const store = new SqliteStore({ dataDir, contentLimitBytes: 8 << 20, cacheBytes: 64 << 20, history: { limit: 10_000, enabled }, commits: new CommitCounter() })
  try {
    await store.createUser({ id: 'usr_0123456789abcdefghij', username: 'bench', passwordHash: 'x', createdAt: new Date().toISOString() })
    const project = await store.createProject({ id: 'prj_0123456789abcdefghij', ownerId: 'usr_0123456789abcdefghij', ownerName: 'bench', slug: 'demo', name: 'demo', createdAt: new Date().toISOString() })
    await store.applyOperation(project, { op: 'update', value: documentOfSize(1024) }, actor)
    const commits = async n => {
      for (let i = 0; i < n; i++) {
        const writes = []
        for (let j = 0; j < batch; j++) {
          const op = { op: 'increment', path: ['counter'], value: 1 }
          validateOperation(op, true)
          writes.push(store.applyOperation(project, op, actor))
        }
        await Promise.all(writes)
      }
    }
    await commits(warmup)
    // The store's own connection (private): the WAL emptied, then kept whole while counting.
    const db = store.db
    db.pragma('wal_checkpoint(TRUNCATE)')
    db.pragma('wal_autocheckpoint = 0')
    await commits(counted)
    const owners = new Map(db.prepare('SELECT pageno, name FROM dbstat').raw().all())
    const wal = readFileSync(join(dataDir, 'contentd.sqlite-wal'))
    const byTree = new Map()
    for (let at = 32; at + FRAME_BYTES <= wal.length; at += FRAME_BYTES) {
      const page = wal.readUInt32BE(at)
      const tree = page === 1 ? 'page 1 (header)' : owners.get(page) ?? 'freelist'
      byTree.set(tree, (byTree.get(tree) ?? 0) + 1)
    }
    const total = [...byTree.values()].reduce((a, b) => a + b, 0)
    return { total: total / counted, byTree: [...byTree].sort((a, b) => b[1] - a[1]).map(([tree, n]) => `${tree} ${(n / counted).toFixed(2)}`) }
  } finally {
    await store.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

for (const enabled of [true, false]) {
  const { total, byTree } = await framesPerCommit(enabled)
  console.log(`HISTORY=${enabled ? 'on ' : 'off'}: ${total.toFixed(2)} WAL frames per group commit of ${batch} increments (${byTree.join(', ')})`)
}
