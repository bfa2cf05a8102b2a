// The Markdown report: machine, throughput table, fan-out, memory, and the goals with the
// ratios measured in this run. Failed or pending scenarios are shown as such, never hidden.

const fmt = (n, digits = 0) => n === undefined || n === null || Number.isNaN(n) ? '—' : Number(n).toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

function rows (results) {
  return Object.values(results).flat().filter(Boolean)
}

function throughputTable (results) {
  const lines = [
    '| scenario | req/s | p50 ms | p99 ms | server CPU ms/req | answered | non-2xx | errors | result |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---|'
  ]
  for (const r of rows(results)) {
    if (r.kind === 'fanout' || r.kind === 'memory') continue
    if (r.error || r.pending) { lines.push(`| ${r.scenario} | — | — | — | — | — | — | — | ${r.pending ? 'pending' : 'FAILED'}: ${r.error ?? r.note} |`); continue }
    const status = r.failed ? 'FAILED' : 'ok'
    lines.push(`| ${r.scenario} | ${fmt(r.reqPerSec)} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.cpuPerRequest, 2)} | ${fmt(r.ok)} | ${fmt(r.non2xx)} | ${fmt((r.errors ?? 0) + (r.timeouts ?? 0))} | ${status}${r.note ? ` (${r.note})` : ''} |`)
  }
  return lines.join('\n')
}

function fanoutTable (results) {
  const found = rows(results).filter(r => r.kind === 'fanout' || (r.scenario ?? '').startsWith('fan-out'))
  if (found.length === 0) return null
  const lines = ['| scenario | subscribers | changes | deliveries | after response p50 ms | after response p99 ms | after request sent p50 ms | p99 ms | result |', '|---|---:|---:|---:|---:|---:|---:|---:|---|']
  for (const r of found) {
    if (r.error || r.pending) { lines.push(`| ${r.scenario} | — | — | — | — | — | — | — | ${r.pending ? 'pending' : 'FAILED'}: ${r.error ?? r.note} |`); continue }
    lines.push(`| ${r.scenario} | ${fmt(r.subscribers)} | ${fmt(r.changes)} | ${fmt(r.deliveries)} | ${fmt(r.p50, 1)} | ${fmt(r.p99, 1)} | ${fmt(r.requestP50, 1)} | ${fmt(r.requestP99, 1)} | ${r.failed ? 'FAILED' : 'ok'}${r.note ? ` (${r.note})` : ''} |`)
  }
  return lines.join('\n')
}

function memoryTable (results) {
  const found = rows(results).filter(r => r.kind === 'memory' || (r.scenario ?? '').startsWith('memory'))
  if (found.length === 0) return null
  const lines = ['| scenario | projects | content each | RSS after | seconds to load | result |', '|---|---:|---:|---:|---:|---|']
  for (const r of found) {
    if (r.error) { lines.push(`| ${r.scenario} | — | — | — | — | FAILED: ${r.error} |`); continue }
    lines.push(`| ${r.scenario} | ${fmt(r.projects)} | ${fmt(r.contentKiB)} KiB | ${fmt(r.rssMiB, 1)} MiB | ${fmt(r.seconds, 1)} | ${r.failed ? 'FAILED' : 'ok'}${r.note ? ` (${r.note})` : ''} |`)
  }
  return lines.join('\n')
}

function goals (results) {
  const ok = r => r && !r.failed && !r.error && !r.pending
  const rps = name => { const r = results[name]; return ok(r) ? r.reqPerSec : undefined }
  const ratio = (a, b) => a !== undefined && b !== undefined ? a / b : undefined
  // Interleaved scenarios also give the ratio of each round: its spread shows how steady it is.
  const spread = (a, b) => {
    const x = results[a]?.perRound
    const y = results[b]?.perRound
    if (!ok(results[a]) || !ok(results[b]) || !x || !y || x.length !== y.length) return ''
    const each = x.map((v, i) => v / y[i])
    return ` (rounds ${fmt(Math.min(...each), 2)}–${fmt(Math.max(...each), 2)})`
  }
  const fanouts = [results.fanout].flat().filter(Boolean)
  const list = [
    ['increment (1 KiB) / ceiling', ratio(rps('increment1k'), rps('ceiling')), '≥ 0.60 (stretch 0.80)', v => v >= 0.6, v => `${fmt(v, 2)}×${v >= 0.8 ? ' (stretch met)' : ''}${spread('increment1k', 'ceiling')}`],
    ['increment (1 MiB) / increment (1 KiB)', ratio(rps('increment1m'), rps('increment1k')), '≥ 0.50', v => v >= 0.5, v => `${fmt(v, 2)}×${spread('increment1m', 'increment1k')}`],
    ['increment (1 MiB) / json-server PATCH (1 MiB)', ratio(rps('increment1m'), rps('peer')), '≥ 20×', v => v >= 20, v => `${fmt(v, 1)}×`],
    ['fan-out p99, one node', fanouts.find(r => r.nodes === 1 && ok(r))?.p99, '≤ 50 ms', v => v <= 50, v => `${fmt(v, 1)} ms`],
    ['fan-out p99, two nodes + Redis', fanouts.find(r => r.nodes === 2 && ok(r))?.p99, '≤ 100 ms', v => v <= 100, v => `${fmt(v, 1)} ms`],
    ['RSS with 10,000 projects touched', ok(results.memory) ? results.memory.rssMiB : undefined, '≤ 300 MiB', v => v <= 300, v => `${fmt(v, 1)} MiB`]
  ]
  const lines = ['| goal | measured | target | met |', '|---|---:|---|---|']
  for (const [name, value, target, met, show] of list) {
    lines.push(value === undefined ? `| ${name} | — | ${target} | not measured |` : `| ${name} | ${show(value)} | ${target} | ${met(value) ? 'yes' : 'NO'} |`)
  }
  return lines.join('\n')
}

const SCENARIO_NOTES = [
  '**ceiling**: bare Express 5 (`bench/ceiling-server.mjs`) answering the increment URL: it reads and parses the JSON body and answers a constant `{message}`; no auth, store or logging.',
  '**increment**: `POST …/content/increment {"path":"counter","value":1}` with an API key on a project whose content is ~1 KiB or ~1 MiB of records (`bench/lib/documents.mjs`); the counter is read back and must have moved at least by the number of 2xx answers.',
  '**set**: a 1 KiB object written at one path, over and over. **push**: a small object appended to an array that grows during the run. **get**: the whole ~1 MiB content (200), then the same with `If-None-Match` of its ETag (304).',
  '**hot counter**: 64 connections, a fixed number of increments on one path, all answered; the final value must equal the number of 2xx answers exactly.',
  '**peer**: json-server 0.17 (lowdb, rewrites the whole `db.json` on every change) serving the same ~1 MiB document as `/docs/1`, changed with `PATCH /docs/1 {"counter":2}`.',
  '**fan-out**: subscribers (one Socket.IO connection each, WebSocket transport) on one project; 50 increments sent one at a time, 100 ms apart. Delay is measured from the HTTP response (0 when the change arrived first: the server emits right after the commit, before it answers) and from the moment the request was sent (includes the commit). Two nodes share the SQLite file and a Redis started by the script (`redis-server` must be installed); subscribers alternate between the nodes, changes go to the first.',
  '**memory**: 10,000 projects created, each given 10 KiB of content, then each read once; RSS of the server process from /proc with the default CACHE_BYTES.'
]

export function renderReport ({ machine, results, date }) {
  const parts = [
    '# contentd benchmarks',
    '',
    `Measured ${date} with \`npm run bench\` (BENCH_DURATION=${process.env.BENCH_DURATION ?? 10} s per HTTP scenario after a ${process.env.BENCH_WARMUP ?? 2} s warm-up; the ceiling and the two increment scenarios, whose ratios are the goals, run interleaved in ${process.env.BENCH_ROUNDS ?? 5} alternating rounds; autocannon, 32 connections unless stated, API-key auth, every server a separate child process on loopback, LOG_LEVEL=warn, RATE_LIMIT=0, SQLite with synchronous=FULL).`,
    '',
    `Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB RAM, Node ${machine.node}, ${machine.os}; load average at start ${machine.loadAtStart}.`,
    '',
    '## Goals (ratios within this run)',
    '',
    goals(results),
    '',
    '## Throughput and latency',
    '',
    throughputTable(results)
  ]
  const fan = fanoutTable(results)
  if (fan) parts.push('', '## Fan-out (Socket.IO)', '', fan)
  const mem = memoryTable(results)
  if (mem) parts.push('', '## Memory', '', mem)
  parts.push('', '## What each scenario does', '', ...SCENARIO_NOTES.map(line => `- ${line}`))
  parts.push('', 'The load generator runs on the same machine as the servers, so on a 2-core machine it takes one core: absolute numbers are low, the ratios are what compare. The ratio scenarios are interleaved (all three servers up, each measured for a slice in turn, the order rotating each round) because other work on a shared machine drifts over a run and back-to-back runs would compare different conditions (docs/benchmarks.md has the numbers). For them p50 is the median over the rounds, p99 that of the worst round, and the goals table shows the lowest and highest ratio of a single round. "server CPU ms/req" is the server process\'s user+system CPU time divided by the requests of the measured run: steadier than req/s when other work shares the machine. Rerun on a quiet machine: `npm run bench` (see docs/benchmarks.md).', '')
  return parts.join('\n')
}
