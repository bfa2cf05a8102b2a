// Time travel: GET …/content?version=N on a ~1 MiB document with 10,000 change log entries
// (docs/change-log.md). Its cost must not grow with the log: checkpoints bound every read to
// one checkpoint plus at most ~1,000 entries. Each sampled version is read 15 times
// (READS_PER_VERSION), one request at a time (a latency, not a throughput), and checked: the
// counter at version N is N − 1 (version 1 is the document's upload, each later version one
// increment). The goal's "worst N" is the version with the highest p50 of its 15 reads: the
// maximum over 49 versions of a median of only 5 swung by ±7 ms between runs on a 2-core
// machine, as two or three reads slowed by anything else running decided it.
// The first read of a version (cold: nothing of it computed yet) and the repeats are reported
// apart, so a cache of answers could not pass for a fast replay; the goal holds for both.
import { call, expectStatus, owner, startContentd } from '../lib/contentd.mjs'
import { documentOfSize } from '../lib/documents.mjs'
import { measure } from '../lib/load.mjs'
import { percentile } from '../lib/percentiles.mjs'

const ENTRIES = 10_000
const DOCUMENT_BYTES = 1024 * 1024 - 512
const READS_PER_VERSION = 15
/** Reads of the current content, for comparison. */
const CURRENT_READS = 20
const RANDOM_VERSIONS = 40

export async function history () {
  const server = await startContentd()
  try {
    const user = await owner(server.url, 'bench')
    const path = await user.project('demo', documentOfSize(DOCUMENT_BYTES))
    const headers = { authorization: `Bearer ${user.key}` }
    // Versions 2..ENTRIES: increments, 32 at a time.
    await measure({ url: `${server.url}${path}/content/increment`, headers, body: JSON.stringify({ path: 'counter', value: 1 }), amount: ENTRIES - 1, warmup: false })
    const now = await expectStatus(call(server.url, 'GET', `${path}/content?path=counter`, { token: user.key }), 200, 'counter')
    if (now.headers.get('etag') !== `"${ENTRIES}"`) throw new Error(`history: expected version ${ENTRIES}, got ETag ${now.headers.get('etag')}`)

    // Warm-up on another project, as the HTTP scenarios warm up for WARMUP_S: the server's
    // code is compiled, but nothing of the measured project is cached before its first reads.
    const warm = await user.project('warm', documentOfSize(16 * 1024))
    await measure({ url: `${server.url}${warm}/content/increment`, headers, body: JSON.stringify({ path: 'counter', value: 1 }), amount: 1000, warmup: false })
    for (let i = 0; i < 200; i++) await (await fetch(`${server.url}${warm}/content?version=${1 + (i * 7919) % 1000}`, { headers })).text()

    // The edges of checkpoint intervals (the longest replays), the ends, and random versions.
    const versions = new Set([1, 2, 999, 1000, 1001, 1999, 5000, 9999, ENTRIES])
    while (versions.size < 9 + RANDOM_VERSIONS) versions.add(1 + Math.floor(Math.random() * ENTRIES))
    const all = []
    const cold = []
    const repeats = []
    let worst = { version: 0, p50: 0 }
    let slowestCold = { version: 0, ms: 0 }
    for (const version of versions) {
      const times = []
      for (let i = 0; i < READS_PER_VERSION; i++) {
        const started = performance.now()
        const response = await fetch(`${server.url}${path}/content?version=${version}`, { headers })
        const text = await response.text()
        times.push(performance.now() - started)
        if (response.status !== 200) throw new Error(`history: ?version=${version} answered ${response.status} ${text.slice(0, 200)}`)
        if (i === 0 && JSON.parse(text).counter !== version - 1) throw new Error(`history: ?version=${version} has counter ${JSON.parse(text).counter}, expected ${version - 1}`)
      }
      cold.push(times[0])
      repeats.push(...times.slice(1))
      if (times[0] > slowestCold.ms) slowestCold = { version, ms: times[0] }
      times.sort((a, b) => a - b)
      const p50 = percentile(times, 50)
      if (p50 > worst.p50) worst = { version, p50 }
      all.push(...times)
    }
    for (const list of [all, cold, repeats]) list.sort((a, b) => a - b)
    // The same read of the current content (cached, no replay): what the machine takes to
    // send 1 MiB, so a slow run can be told from a slow replay.
    const current = []
    for (let i = 0; i < CURRENT_READS; i++) {
      const started = performance.now()
      const response = await fetch(`${server.url}${path}/content`, { headers })
      await response.text()
      current.push(performance.now() - started)
    }
    current.sort((a, b) => a - b)
    return {
      kind: 'history',
      scenario: `GET ?version=N: ~1 MiB content, ${ENTRIES.toLocaleString('en-US')} log entries, ${READS_PER_VERSION} reads a version`,
      entries: ENTRIES,
      versions: versions.size,
      readsPerVersion: READS_PER_VERSION,
      requests: all.length,
      p50: percentile(all, 50),
      p99: percentile(all, 99),
      coldP50: percentile(cold, 50),
      repeatP50: percentile(repeats, 50),
      worstP50: worst.p50,
      worstVersion: worst.version,
      slowestCold: slowestCold.ms,
      slowestColdVersion: slowestCold.version,
      failed: false,
      note: `every answer checked; slowest first read ${slowestCold.ms.toFixed(1)} ms (version ${slowestCold.version.toLocaleString('en-US')}); the current content, cached: p50 ${percentile(current, 50).toFixed(1)} ms`
    }
  } finally {
    await server.stop()
  }
}
