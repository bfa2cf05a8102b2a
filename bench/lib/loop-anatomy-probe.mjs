// Loaded into a server under test with `node --import` by bench/loop-anatomy.mjs: records, in
// memory, what the event loop did, and writes it as JSON to LOOP_ANATOMY_OUT on SIGTERM:
// - samples: [time, delay] of a timer due every 10 ms, as contentd_event_loop_delay_seconds
//   measures it (server/observability/event-loop-delay.ts);
// - gc: [start, duration, kind] of every collection (perf_hooks kinds: 1 minor, 4 major,
//   8 incremental marking);
// - commits: [start, duration] of every immediate transaction (the group commit, COMMIT and
//   its fsync included), timed by wrapping better-sqlite3's transaction();
// - responses: the time each response ended.
// Times are milliseconds since the epoch, so they line up with strace's.
import { writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { ServerResponse } from 'node:http'
import { PerformanceObserver, performance } from 'node:perf_hooks'

const out = process.env.LOOP_ANATOMY_OUT
const now = () => performance.timeOrigin + performance.now()
const record = { pid: process.pid, samples: [], gc: [], commits: [], responses: [] }

try {
  // The server's own copy (an ESM import of a CommonJS package shares require's cache).
  const Database = createRequire(import.meta.url)('better-sqlite3')
  const transaction = Database.prototype.transaction
  Database.prototype.transaction = function timedTransaction (fn) {
    const plain = transaction.call(this, fn)
    const wrapped = function (...args) { return plain.apply(this, args) }
    for (const mode of ['default', 'deferred', 'exclusive']) wrapped[mode] = plain[mode]
    wrapped.immediate = function (...args) {
      const started = now()
      try { return plain.immediate.apply(this, args) } finally { record.commits.push([started, now() - started]) }
    }
    return wrapped
  }
} catch {
  // A server without better-sqlite3 (the ceiling) has no commits to time.
}

const end = ServerResponse.prototype.end
ServerResponse.prototype.end = function (...args) {
  record.responses.push(now())
  return end.apply(this, args)
}

new PerformanceObserver(list => {
  for (const entry of list.getEntries()) record.gc.push([performance.timeOrigin + entry.startTime, entry.duration, entry.detail?.kind])
}).observe({ entryTypes: ['gc'] })

const SAMPLE_MS = 10
let due = performance.now() + SAMPLE_MS
function sample () {
  const at = performance.now()
  record.samples.push([performance.timeOrigin + at, Math.max(0, at - due)])
  due = at + SAMPLE_MS
  setTimeout(sample, SAMPLE_MS).unref()
}
setTimeout(sample, SAMPLE_MS).unref()

process.once('SIGTERM', () => {
  writeFileSync(out, JSON.stringify(record))
  process.exit(0)
})
