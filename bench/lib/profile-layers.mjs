// A V8 CPU profile (node --cpu-prof) of a contentd server, its self time summed by layer: the
// table BENCHMARKS.md shows under "Where the time goes", made by code (bench/profile.mjs).
// Every sample counts, in one row or another, so the shares add up to 100%. A sample in a
// native function that the profile shows as a frame of its own (no script URL) counts where
// its nearest JavaScript caller is, except the socket writes (their own row) and the WAL's
// fdatasync call (better-sqlite3's row, with the commit it makes durable). V8 gives most
// bindings' time to their caller without a frame: a SQLite statement's run counts in the
// store function that ran it, a transaction's BEGIN/COMMIT in better-sqlite3's wrapper.

/** The rows, in the order the table shows them: [key, what it holds]. */
export const LAYERS = [
  ['sqlite', 'better-sqlite3 (its transaction wrapper with `BEGIN`/`COMMIT`, `exec`, `pragma`) and the WAL\'s `fdatasync` call'],
  ['gc', 'garbage collection'],
  ['node', 'Node\'s internals, HTTP, streams and events'],
  ['express', 'Express, its router, parseurl'],
  ['body', 'body parsing (body-parser, raw-body, iconv-lite)'],
  ['http', 'contentd\'s HTTP layer (fast path, identity, access, rules, limits, routes, metrics, prom-client, logging)'],
  ['store', 'contentd\'s store (sqlite-store, content log, writer, feed, webhooks; with the SQLite statements they run)'],
  ['validation', 'validation and the operation (shared/, engine/, schema/, zod)'],
  ['realtime', 'realtime (contentd\'s realtime/ and queries/, Socket.IO, Engine.IO, ws)'],
  ['writev', '`writev` (the answers)'],
  ['program', '`(program)` (V8 and native work outside JavaScript)'],
  ['idle', 'idle'],
  ['other', 'other']
]

const PACKAGES = {
  sqlite: ['better-sqlite3', 'bindings', 'file-uri-to-path'],
  express: ['express', 'router', 'parseurl', 'finalhandler', 'send', 'serve-static', 'path-to-regexp', 'encodeurl', 'escape-html', 'fresh', 'etag', 'depd', 'accepts', 'negotiator', 'vary', 'on-finished', 'ee-first', 'content-disposition', 'cookie', 'cookie-signature', 'proxy-addr', 'forwarded', 'ipaddr.js', 'range-parser', 'statuses', 'qs', 'mime-types', 'mime-db', 'setprototypeof', 'http-errors', 'debug', 'ms', 'once', 'wrappy', 'is-promise', 'merge-descriptors', 'toidentifier', 'inherits', 'side-channel', 'object-inspect', 'get-intrinsic', 'call-bound', 'math-intrinsics', 'es-errors', 'function-bind', 'hasown', 'dunder-proto', 'gopd', 'has-symbols', 'es-object-atoms', 'es-define-property', 'call-bind-apply-helpers', 'get-proto', 'side-channel-list', 'side-channel-map', 'side-channel-weakmap'],
  body: ['body-parser', 'raw-body', 'iconv-lite', 'content-type', 'type-is', 'media-typer', 'bytes', 'unpipe', 'safer-buffer', 'safe-buffer'],
  http: ['prom-client', 'pino', 'pino-http', 'pino-std-serializers', 'sonic-boom', 'thread-stream', 'fast-redact', 'quick-format-unescaped', 'atomic-sleep', 'on-exit-leak-free', 'helmet', 'cors', 'object-assign', 'express-rate-limit', 'tdigest', 'bintrees'],
  validation: ['zod', 'ajv', 'ajv-formats', 'fast-deep-equal', 'fast-uri', 'json-schema-traverse', 'require-from-string', '@bufbuild/cel', '@bufbuild/protobuf'],
  realtime: ['socket.io', 'engine.io', 'ws', 'socket.io-adapter', 'socket.io-parser', '@socket.io/component-emitter', 'base64id', 'sorted-btree']
}
const PACKAGE_LAYER = new Map(Object.entries(PACKAGES).flatMap(([layer, names]) => names.map(name => [name, layer])))

// contentd's own directories under dist/ (server/…, shared/).
const CONTENTD_LAYER = [
  [/\/dist\/shared\//, 'validation'],
  [/\/dist\/server\/(engine|schema)\//, 'validation'],
  [/\/dist\/server\/(store|feed|webhooks)\//, 'store'],
  [/\/dist\/server\/(realtime|queries)\//, 'realtime'],
  [/\/dist\/server\//, 'http']
]

const WRITES = new Set(['writev', 'writeUtf8String', 'writeBuffer', 'writeLatin1String', 'writeAsciiString', 'writeUcs2String'])
const SYNCS = new Set(['fdatasync', 'fsync'])
const SPECIAL = { '(garbage collector)': 'gc', '(program)': 'program', '(idle)': 'idle', '(root)': 'program' }

/** The layer of a frame that has a script URL, and the name "other" is told by. */
function layerOfScript (url) {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (pkg) return { layer: PACKAGE_LAYER.get(pkg[1]) ?? 'other', name: pkg[1] }
  if (url.startsWith('node:')) return { layer: 'node', name: url }
  for (const [pattern, layer] of CONTENTD_LAYER) if (pattern.test(url)) return { layer, name: url.replace(/^.*\/dist\//, 'dist/') }
  return { layer: 'other', name: url }
}

/**
 * Self time by layer of `profile` (a .cpuprofile's JSON): { total (µs), layers: Map(key → µs),
 * others: Map(name → µs) (what fell in "other") }. `window` ({ from, to }, µs of the monotonic
 * clock V8 stamps samples with, which is process.hrtime's on Linux): only the samples within it.
 */
export function layerTimes (profile, window = undefined) {
  const byId = new Map(profile.nodes.map(n => [n.id, n]))
  const parent = new Map()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const memo = new Map()
  const classify = id => {
    if (memo.has(id)) return memo.get(id)
    const { functionName, url } = byId.get(id).callFrame
    let found
    if (SPECIAL[functionName]) found = { layer: SPECIAL[functionName], name: functionName }
    else if (url) found = layerOfScript(url)
    else if (WRITES.has(functionName)) found = { layer: 'writev', name: functionName }
    else if (SYNCS.has(functionName)) found = { layer: 'sqlite', name: functionName }
    else {
      // A native function: its caller's layer; a call from better-sqlite3 or the store is SQLite's own work.
      let up = parent.get(id)
      while (up !== undefined && !byId.get(up).callFrame.url) up = parent.get(up)
      const caller = up === undefined ? { layer: 'other', name: `(native ${functionName})` } : classify(up)
      found = caller.layer === 'sqlite' || caller.layer === 'store' ? { layer: 'sqlite', name: functionName } : { ...caller, name: `${caller.name} → ${functionName || '(native)'}` }
    }
    memo.set(id, found)
    return found
  }
  const layers = new Map(LAYERS.map(([key]) => [key, 0]))
  const others = new Map()
  let total = 0
  let at = profile.startTime
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0
    at += dt
    if (window && (at < window.from || at > window.to)) return
    total += dt
    const { layer, name } = classify(id)
    layers.set(layer, layers.get(layer) + dt)
    if (layer === 'other') others.set(name, (others.get(name) ?? 0) + dt)
  })
  return { total, layers, others }
}

/** The Markdown table: one column per `{ title, times }` (layerTimes' result), shares of each column's samples. */
export function layerTable (columns) {
  const pct = (us, total) => `${(100 * us / Math.max(1, total)).toFixed(1)}%`
  const lines = [`| layer (self time) | ${columns.map(c => c.title).join(' | ')} |`, `|---|${columns.map(() => '---:').join('|')}|`]
  for (const [key, label] of LAYERS) {
    lines.push(`| ${label} | ${columns.map(c => pct(c.times.layers.get(key), c.times.total)).join(' | ')} |`)
  }
  const notes = columns.map(c => {
    const top = [...c.times.others].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([name, us]) => `${name} ${pct(us, c.times.total)}`)
    return top.length ? `${c.title}: ${top.join(', ')}` : null
  }).filter(Boolean)
  if (notes.length) lines.push('', `(The most of "other": ${notes.join('; ')}.)`)
  return lines.join('\n')
}
