// The Markdown results: machine, throughput table, fan-out, memory, and the goals with the
// ratios measured in this run. Failed or pending scenarios are shown as such, never hidden.
import { histogramPercentile, histogramShareWithin, RATIO_DURATION_S } from './load.mjs'
import { pathGoals, pathsTable } from './paths-report.mjs'
import { streamGoals, streamTable } from './stream-report.mjs'
import { queryGoals } from './query-report.mjs'
import { fmt } from './format.mjs'
import { floorTable, issue35Goals, sseCpuTable } from './issue35-report.mjs'

function rows (results) {
  return Object.values(results).flat().filter(Boolean)
}

/**
 * A Markdown table with one row per scenario: "scenario", then `columns` (right-aligned, or
 * `{ title, left: true }`), then "result". `cells(r)` gives a row's values for `columns`; a
 * scenario that failed or is pending gets a dash in each, and its reason under result.
 */
function scenarioTable (found, columns, cells) {
  const titles = columns.map(c => typeof c === 'string' ? c : c.title)
  const aligns = columns.map(c => typeof c === 'string' || !c.left ? '---:' : '---')
  const lines = [`| scenario | ${titles.join(' | ')} | result |`, `|---|${aligns.join('|')}|---|`]
  for (const r of found) {
    const scenario = r.scenario ?? r.kind
    if (r.error || r.pending) { lines.push(`| ${scenario} | ${titles.map(() => '—').join(' | ')} | ${r.pending ? 'pending' : 'FAILED'}: ${r.error ?? r.note} |`); continue }
    lines.push(`| ${scenario} | ${cells(r).join(' | ')} | ${r.failed ? 'FAILED' : 'ok'}${r.note ? ` (${r.note})` : ''} |`)
  }
  return lines.join('\n')
}

const OWN_TABLE_KINDS = new Set(['fanout', 'fanout-wide', 'memory', 'history', 'fairness', 'presence', 'stream', 'console', 'attacks', 'backup', 'json-work', 'paths', 'net-floor', 'sse-cpu'])

function throughputTable (results) {
  const found = rows(results).filter(r => !OWN_TABLE_KINDS.has(r.kind) && r.scenario !== 'presence')
  return scenarioTable(found, ['req/s', 'p50 ms', 'p99 ms', 'server CPU ms/req', 'answered', 'non-2xx', 'errors'],
    r => [fmt(r.reqPerSec), fmt(r.p50), fmt(r.p99), fmt(r.cpuPerRequest, 2), fmt(r.ok), fmt(r.non2xx), fmt((r.errors ?? 0) + (r.timeouts ?? 0))])
}

function fanoutTable (results) {
  const found = rows(results).filter(r => r.kind === 'fanout' || (r.kind === undefined && (r.scenario ?? '').startsWith('fan-out')))
  if (found.length === 0) return null
  return scenarioTable(found, ['subscribers', 'changes', 'deliveries', 'after response p50 ms', 'after response p99 ms', 'after request sent p50 ms', 'p99 ms'],
    r => [fmt(r.subscribers), fmt(r.changes), fmt(r.deliveries), fmt(r.p50, 1), fmt(r.p99, 1), fmt(r.requestP50, 1), fmt(r.requestP99, 1)])
}

function wideFanoutTable (results) {
  const found = [results.fanoutWide].flat().filter(Boolean)
  if (found.length === 0) return null
  return scenarioTable(found, ['subscribers', 'changes', 'deliveries', 'lost', 'after commit p50 ms', 'p99 ms', 'max ms', 'last written (20 probes) p99 ms', 'after response p99 ms', 'server CPU µs/delivery', 'server RSS per connection'],
    r => [fmt(r.subscribers), fmt(r.changes), fmt(r.deliveries), fmt(r.lost), fmt(r.p50, 1), fmt(r.p99, 1), fmt(r.max, 1), fmt(r.broadcastEndP99, 1), fmt(r.responseP99, 1), fmt(r.cpuMicrosPerDelivery, 2), `${fmt(r.bytesPerConnection / 1024, 1)} KiB (${fmt(r.rssBeforeMiB)} → ${fmt(r.rssConnectedMiB)} MiB)`])
}

function presenceTable (results) {
  const found = rows(results).filter(r => r.kind === 'presence' || (r.scenario ?? '').startsWith('presence'))
  if (found.length === 0) return null
  return scenarioTable(found, ['members', 'updates/s', 'deliveries/s', 'of asked', 'delay p50 ms', 'p99 ms', 'max ms', 'server CPU (cores)', 'server CPU µs/delivery'],
    r => [fmt(r.members), fmt(r.updatesPerSecond), fmt(r.deliveriesPerSecond), r.asked > 0 ? `${fmt(100 * r.deliveriesPerSecond / r.asked)}%` : '—', fmt(r.p50, 1), fmt(r.p99, 1), fmt(r.max, 1), fmt(r.cpuCores, 2), fmt(r.cpuMicrosPerDelivery, 2)])
}

function memoryTable (results) {
  const found = rows(results).filter(r => r.kind === 'memory' || (r.scenario ?? '').startsWith('memory'))
  if (found.length === 0) return null
  return scenarioTable(found, ['projects', 'content each', 'RSS after', 'seconds to load'],
    r => [fmt(r.projects), `${fmt(r.contentKiB)} KiB`, `${fmt(r.rssMiB, 1)} MiB`, fmt(r.seconds, 1)])
}

function consoleTable (results) {
  const found = rows(results).filter(r => r.kind === 'console')
  if (found.length === 0) return null
  return scenarioTable(found, ['first visit', '1 MiB: snapshot → painted', 'subscribe → painted', 'page load → painted', 'changes/s', 'fps', 'frame gap p99 / max', 'long tasks', 'main thread busy (scripts)', 'last change shown'],
    r => [`${fmt(r.pageRequests)} requests, ${fmt(r.pageBytes / 1024)} KiB (${fmt(r.pageGzipBytes / 1024)} KiB gzipped)`, `${fmt(r.renderFromSnapshotMs)} ms`, `${fmt(r.renderFromSubscribeMs)} ms`, `${fmt(r.renderFromNavigationMs)} ms`, fmt(r.changesPerSecond), fmt(r.fps), `${fmt(r.frameGapP99)} / ${fmt(r.frameGapMax)} ms`, `${fmt(r.longTasks)} (${fmt(100 * r.longTaskShare, 1)}% of the time)`, `${fmt(100 * r.mainThreadShare, 1)}% (${fmt(100 * r.scriptShare, 1)}%)`, `${fmt(r.caughtUpMs)} ms after its response`])
}

function historyTable (results) {
  const found = rows(results).filter(r => r.kind === 'history' || (r.scenario ?? '').startsWith('GET ?version'))
  if (found.length === 0) return null
  return scenarioTable(found, ['versions read', 'requests', 'p50 ms, first reads', 'p50 ms, repeats', 'p99 ms', 'worst version\'s p50 ms'],
    r => [fmt(r.versions), fmt(r.requests), fmt(r.coldP50, 1), fmt(r.repeatP50, 1), fmt(r.p99, 1), `${fmt(r.worstP50, 1)} (version ${fmt(r.worstVersion)}, ${fmt(r.readsPerVersion)} reads)`])
}

function fairnessTable (results) {
  const found = rows(results).filter(r => r.kind === 'fairness' || (r.scenario ?? '').startsWith('fairness'))
  if (found.length === 0) return null
  return scenarioTable(found, ['quiet p50 ms', 'quiet p99 ms', 'flooded p50 ms', 'flooded p99 ms', 'p99 flooded / quiet', 'samples quiet / flooded', { title: 'what the flood got', left: true }], r => {
    const f = r.flood
    const got = `${fmt(f.keyPages)} key pages (${fmt(f.keyPagesLimited)} × 429), ${fmt(f.snapshots)} snapshots (${fmt(f.subscribesLimited)} × RATE_LIMITED), ${fmt(f.handshakes)} handshakes (${fmt(f.handshakesLimited)} × 429), ${fmt(f.errors)} errors`
    return [fmt(r.quietP50, 1), fmt(r.quietP99, 1), fmt(r.floodedP50, 1), fmt(r.floodedP99, 1), `${fmt(r.ratio, 2)}×`, r.samples, got]
  })
}

function attacksTable (results) {
  const found = [results.attacks].flat().filter(Boolean)
  if (found.length === 0) return null
  return scenarioTable(found, ['quiet p99 ms', 'attacked p50 ms', 'attacked p99 ms', 'attacked max ms', 'failed / sent', 'server RSS peak MiB', 'process', { title: 'what the attacker got', left: true }],
    r => [fmt(r.quietP99, 1), fmt(r.attackedP50, 1), fmt(r.attackedP99, 1), fmt(r.attackedMax, 1), `${fmt(r.failures)} / ${fmt(r.samples)}`, fmt(r.peakRssMiB), r.survived ? 'alive' : 'DIED or stalled', Object.entries(r.got ?? {}).map(([k, v]) => `${k}: ${fmt(v)}`).join(', ')])
}

function backupTable (results) {
  const found = [results.backup].flat().filter(Boolean)
  if (found.length === 0) return null
  return scenarioTable(found, ['store MiB', 'quiet p99 ms', 'during backup p99 ms', 'p99 during / quiet', 'backup s', 'cp s', 'backup / cp', 'samples quiet / during'],
    r => [fmt(r.storeMiB), fmt(r.quietP99, 1), fmt(r.duringP99, 1), `${fmt(r.p99Ratio, 2)}×`, fmt(r.backupSeconds, 2), fmt(r.cpSeconds, 2), `${fmt(r.timeRatio, 2)}×`, r.samples])
}

// Each goal: [issue, name, value, target, met, show]; issue 18's first (round two), then the
// goals of earlier issues that still hold ('earlier': set before the issues were numbered here).
function goalRows (results) {
  const ok = r => r && !r.failed && !r.error && !r.pending
  const rps = name => { const r = results[name]; return ok(r) ? r.reqPerSec : undefined }
  const ratio = (a, b) => a !== undefined && b !== undefined ? a / b : undefined
  // Interleaved scenarios also give the ratio of each round: its spread shows how steady it is.
  const roundSpread = (x, y) => {
    if (!x || !y || x.length !== y.length) return ''
    const each = x.map((v, i) => v / y[i])
    return ` (rounds ${fmt(Math.min(...each), 2)}–${fmt(Math.max(...each), 2)})`
  }
  const spread = (a, b) => ok(results[a]) && ok(results[b]) ? roundSpread(results[a].perRound, results[b].perRound) : ''
  const fanouts = [results.fanout].flat().filter(Boolean)
  const wide = [results.fanoutWide].flat().find(r => r && !r.error)
  const gets = [results.get].flat().filter(Boolean)
  const getOf = variant => gets.find(r => r.variant === variant && ok(r))
  const [compressed, notModified] = [getOf('compressed'), getOf('304')]
  const [singleOps, batchOps, update] = [results.batch].flat()
  const batchRatio = ok(singleOps) && ok(batchOps) ? batchOps.opsPerSec / singleOps.opsPerSec : undefined
  const batchCpu = ok(batchOps) && ok(update) && update.cpuPerRequest ? batchOps.cpuPerRequest / update.cpuPerRequest : undefined
  const loop = ok(results.increment1k) ? results.increment1k.eventLoopDelay : undefined
  const loopRounds = ok(results.increment1k) ? (results.increment1k.eventLoopDelayPerRound ?? []).map(h => histogramPercentile(h, 99)) : []
  const ms = v => `${fmt(v, 1)} ms`
  const attacked = [results.attacks].flat().filter(r => r && !r.error)
  const worstAttack = attacked.length ? attacked.reduce((a, b) => (b.attackedP99 ?? Infinity) > (a.attackedP99 ?? Infinity) ? b : a) : undefined
  const backedUp = ok(results.backup) ? results.backup : undefined
  const json = ok(results.jsonWork) ? results.jsonWork : undefined
  return [
    ...pathGoals(results).map(row => ['29', ...row]),
    ['35', 'JSON parses / serializations of the value per write (96 KB set), with 2 SSE, 1 Socket.IO, 1 webhook', json, '1 / 1 (counted)', v => v.parses === 1 && v.serializations <= 1, v => `${v.parses} / ${v.serializations}`],
    ...issue35Goals(results),
    ['32', `increment p99 during a backup of a ${backedUp ? fmt(backedUp.storeMiB) + ' MiB' : '1 GiB'} store / quiet`, backedUp?.p99Ratio, '≤ 2×', v => v <= 2, v => `${fmt(v, 2)}× (${fmt(backedUp.duringP99, 1)} / ${fmt(backedUp.quietP99, 1)} ms)`],
    ['32', 'backup time / cp of the same store file', backedUp?.timeRatio, '≤ 3×', v => v <= 3, v => `${fmt(v, 2)}× (${fmt(backedUp.backupSeconds, 2)} / ${fmt(backedUp.cpSeconds, 2)} s; the method's floor: SQLite's backup API alone ${fmt(backedUp.backupApiSeconds / backedUp.cpSeconds, 2)}×, dd bs=4k ${fmt(backedUp.ddSeconds / backedUp.cpSeconds, 2)}×)`],
    ...queryGoals(results),
    ['26', 'another user\'s increment p99 under each attack (worst attack), process alive', worstAttack?.attackedP99, '≤ 1000 ms, never dies', v => v <= 1000 && attacked.every(r => r.survived && r.failures === 0), v => `${ms(v)} (${worstAttack.attack}); ${attacked.filter(r => !r.survived).length} deaths, ${attacked.reduce((n, r) => n + r.failures, 0)} failed increments over ${attacked.length} attacks`],
    ['18', 'increment (1 KiB) / ceiling', ratio(rps('increment1k'), rps('ceiling')), '≥ 0.80 (stretch 0.90)', v => v >= 0.8, v => `${fmt(v, 2)}×${v >= 0.9 ? ' (stretch met)' : ''}${spread('increment1k', 'ceiling')}`],
    ['18', 'increment (1 MiB) / increment (1 KiB)', ratio(rps('increment1m'), rps('increment1k')), '≥ 0.90', v => v >= 0.9, v => `${fmt(v, 2)}×${spread('increment1m', 'increment1k')}`],
    ['18', 'batch of 100 increments / single increments (ops/s, same run)', batchRatio, '≥ 20×', v => v >= 20, v => `${fmt(v, 1)}×`],
    ['18', 'GET of a 1 MiB content, 200 as browsers ask (compressed) / 304', ratio(compressed?.reqPerSec, notModified?.reqPerSec), '≥ 0.50', v => v >= 0.5, v => `${fmt(v, 2)}×${roundSpread(compressed?.perRound, notModified?.perRound)}; server CPU ${fmt(compressed.cpuPerRequest, 2)} / ${fmt(notModified.cpuPerRequest, 2)} ms per request`],
    ['18', 'fan-out to 10,000 Socket.IO subscribers, one node: p99 after commit, none lost', wide && !wide.error ? wide.p99 : undefined, '≤ 100 ms, 0 lost', v => v <= 100 && !wide.failed, v => `${ms(v)}, ${fmt(wide.lost)} lost${wide.failed ? ` (${wide.note})` : ''}`],
    ...streamGoals(results).filter(([name]) => name.startsWith('SSE fan-out')).map(row => ['13, 18', ...row]),
    ['18', 'RSS with 10,000 projects × 10 KiB touched', ok(results.memory) ? results.memory.rssMiB : undefined, '≤ 200 MiB', v => v <= 200, v => `${fmt(v, 1)} MiB`],
    ['18', 'event-loop delay p99 under the increment load (1 KiB, interleaved rounds)', loop ? histogramPercentile(loop, 99) : undefined, '≤ 10 ms', v => v <= 10, v => `${ms(v)}${loopRounds.length ? ` (rounds ${fmt(Math.min(...loopRounds), 1)}–${fmt(Math.max(...loopRounds), 1)}; ${fmt(100 * histogramShareWithin(loop, 0.01), 1)}% of samples ≤ 10 ms)` : ''}`],
    ['16', 'increment (1 MiB, schema) / increment (1 MiB)', ratio(rps('increment1mSchema'), rps('increment1m')), '≥ 0.70', v => v >= 0.7, v => `${fmt(v, 2)}×${spread('increment1mSchema', 'increment1m')}`],
    ['13', 'increment (1 KiB) with the change log / HISTORY=off', ratio(rps('increment1k'), rps('increment1kNoHistory')), '≥ 0.90', v => v >= 0.9, v => `${fmt(v, 2)}×${spread('increment1k', 'increment1kNoHistory')}`],
    // The goal holds for any N, first read or not: the larger of the worst version's p50 and the first reads' p50.
    ['13', 'GET ?version=N (1 MiB, 10,000 entries): p50 of the worst N, and of first reads', ok(results.history) ? Math.max(results.history.worstP50, results.history.coldP50 ?? 0) : undefined, '≤ 20 ms', v => v <= 20, () => `${fmt(results.history.worstP50, 1)} ms (worst N, p50 of its ${fmt(results.history.readsPerVersion)} reads); first reads ${fmt(results.history.coldP50, 1)} ms, repeats ${fmt(results.history.repeatP50, 1)} ms`],
    ['earlier', 'increment (1 MiB) / json-server PATCH (1 MiB)', ratio(rps('increment1m'), rps('peer')), '≥ 20×', v => v >= 20, v => `${fmt(v, 1)}×`],
    ['earlier', 'batch of 100 server CPU per request / 1 MiB update', batchCpu, '≤ 1', v => v <= 1, v => `${fmt(v, 3)}×`],
    ['earlier', 'fan-out to 1,000, one node: p99 after the response', fanouts.find(r => r.nodes === 1 && ok(r))?.p99, '≤ 50 ms', v => v <= 50, ms],
    ['earlier', 'fan-out to 1,000, two nodes + Redis: p99 after the response', fanouts.find(r => r.nodes === 2 && ok(r))?.p99, '≤ 100 ms', v => v <= 100, ms],
    ...streamGoals(results).filter(([name]) => !name.startsWith('SSE fan-out')).map(row => ['13', ...row]),
    ['17', 'console: 1 MiB document, snapshot → painted tree', results.console?.renderFromSnapshotMs, '≤ 1000 ms', v => v <= 1000, v => `${fmt(v)} ms`],
    ['17', 'console: frame gap p99 under 100 changes/s', results.console?.frameGapP99, '≤ 100 ms', v => v <= 100, v => `${fmt(v)} ms`],
    ['12', 'another user\'s increment p99, flooded / quiet', ok(results.fairness) ? results.fairness.ratio : undefined, '≤ 2×', v => v <= 2, v => `${fmt(v, 2)}× (${fmt(results.fairness.floodedP99, 1)} / ${fmt(results.fairness.quietP99, 1)} ms)`]
  ]
}

function goals (results) {
  const lines = ['| issue | goal | measured | target | met |', '|---|---|---:|---|---|']
  for (const [issue, name, value, target, met, show] of goalRows(results)) {
    lines.push(value === undefined ? `| ${issue} | ${name} | — | ${target} | not measured |` : `| ${issue} | ${name} | ${show(value)} | ${target} | ${met(value) ? 'yes' : 'NO'} |`)
  }
  return lines.join('\n')
}

// BENCHMARKS.md is half generated: the results sit between these markers and are replaced
// by each full run; everything around them (method, what changed, what was tried) is written
// by hand and kept.
export const RESULTS_START = '<!-- results: start (written by `npm run bench`, bench/lib/report.mjs; edit outside the markers) -->'
export const RESULTS_END = '<!-- results: end -->'

/** The generated part: when and where it ran, the goals, and every scenario's numbers. */
export function renderResults ({ machine, results, date }) {
  const parts = [
    `Measured ${date} with \`npm run bench\` (BENCH_DURATION=${process.env.BENCH_DURATION ?? 10} s per HTTP scenario after a ${process.env.BENCH_WARMUP ?? 2} s warm-up; the ceiling and the increment scenarios are warmed up together and run interleaved in ${process.env.BENCH_ROUNDS ?? 5} alternating rounds over ${RATIO_DURATION_S} s each; see [Method](#method)).`,
    '',
    `Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB RAM, Node ${machine.node}, ${machine.os}; load average at start ${machine.loadAtStart}.`,
    '',
    '### Goals (ratios within this run)',
    '',
    goals(results),
    '',
    '### Throughput and latency',
    '',
    throughputTable(results)
  ]
  const fan = fanoutTable(results)
  if (fan) parts.push('', '### Fan-out (Socket.IO)', '', fan)
  const wide = wideFanoutTable(results)
  if (wide) parts.push('', '### Fan-out to 10,000 (Socket.IO, one node)', '', wide)
  const floor = floorTable(results)
  if (floor) parts.push('', '### The plain-`net` floor of the wide fan-out (same run)', '', floor)
  const hist = historyTable(results)
  if (hist) parts.push('', '### Change log', '', hist)
  const fair = fairnessTable(results)
  if (fair) parts.push('', '### Fairness under abuse', '', fair)
  const att = attacksTable(results)
  if (att) parts.push('', '### Bounded work under attack', '', att)
  const back = backupTable(results)
  if (back) parts.push('', '### Backup under load', '', back)
  const pres = presenceTable(results)
  if (pres) parts.push('', '### Presence fan-out (Socket.IO)', '', pres)
  const streams = streamTable(results)
  if (streams) parts.push('', '### Resume and Server-Sent Events', '', streams)
  const sseCpu = sseCpuTable(results)
  if (sseCpu) parts.push('', '### Server CPU per change: SSE and Socket.IO fan-out', '', sseCpu)
  const paths = pathsTable(results)
  if (paths) parts.push('', '### Live paths', '', paths)
  const mem = memoryTable(results)
  if (mem) parts.push('', '### Memory', '', mem)
  const web = consoleTable(results)
  if (web) parts.push('', '### The console in Chromium', '', web)
  return parts.join('\n')
}

/**
 * BENCHMARKS.md with its results replaced by `resultsMarkdown`, the hand-written rest
 * untouched. Throws when the markers are missing, rather than losing the hand-written part.
 */
export function spliceResults (document, resultsMarkdown) {
  const start = document.indexOf(RESULTS_START)
  const end = document.indexOf(RESULTS_END)
  if (start === -1 || end === -1 || end < start) {
    throw new Error(`BENCHMARKS.md lacks the results markers (${RESULTS_START} … ${RESULTS_END}); not overwriting it`)
  }
  return document.slice(0, start + RESULTS_START.length) + '\n\n' + resultsMarkdown + '\n\n' + document.slice(end)
}
