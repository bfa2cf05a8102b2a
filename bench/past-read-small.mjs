// Reads of past versions of a small document through the embedded store, with no cache of
// checkpoints: each read replays the entries after the nearest checkpoint, so the time is
// that of the longest replays CHECKPOINT_MIN_BYTES allows (server/store/history-policy.ts).
// A 1 KiB document, 2,000 increments, then versions 1,000-1,399 read once each.
//   node bench/past-read-small.mjs [root]   (root: a tree with dist/, default this one; run `npm run build` first)
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { documentOfSize } from './lib/documents.mjs'
import { percentile } from './lib/percentiles.mjs'

const root = resolve(process.argv[2] ?? join(fileURLToPath(import.meta.url), '../..'))
const { SqliteStore } = await import(join(root, 'dist/server/store/sqlite/sqlite-store.js'))
const { CommitCounter } = await import(join(root, 'dist/server/store/sqlite/lookup-cache.js'))
const { validateOperation } = await import(join(root, 'dist/shared/validate-operation.js'))
const actor = { actor: { type: 'key', id: 'key_0123456789abcdef', name: 'bench' } }

const dataDir = mkdtempSync(join(tmpdir(), 'contentd-bench-past-'))
const store = new SqliteStore({ dataDir, contentLimitBytes: 8 << 20, cacheBytes: 0, history: { limit: 10_000, enabled: true }, commits: new CommitCounter() })
try {
  await store.createUser({ id: 'usr_0123456789abcdefghij', username: 'bench', passwordHash: 'x', createdAt: new Date().toISOString() })
  const project = await store.createProject({ id: 'prj_0123456789abcdefghij', ownerId: 'usr_0123456789abcdefghij', ownerName: 'bench', slug: 'demo', name: 'demo', createdAt: new Date().toISOString() })
  await store.applyOperation(project, { op: 'update', value: documentOfSize(1024) }, actor)
  for (let i = 0; i < 2000; i++) {
    const op = { op: 'increment', path: ['counter'], value: 1 }
    validateOperation(op, true)
    await store.applyOperation(project, op, actor)
  }
  const times = []
  for (let version = 1000; version < 1400; version++) {
    const started = performance.now()
    const { content } = await store.readContentAt(project.id, version)
    times.push(performance.now() - started)
    // Version 1 is the document (counter 0), each later one an increment.
    if (content.counter !== version - 1) throw new Error(`version ${version}: counter ${content.counter}`)
  }
  times.sort((a, b) => a - b)
  const ms = p => percentile(times, p).toFixed(3)
  console.log(`past reads of a 1 KiB document (${root}): p50 ${ms(50)} ms, p99 ${ms(99)} ms, max ${times.at(-1).toFixed(3)} ms over ${times.length} versions`)
} finally {
  await store.close()
  rmSync(dataDir, { recursive: true, force: true })
}
