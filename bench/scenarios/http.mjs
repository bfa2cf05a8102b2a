// The HTTP scenarios: the bare-Express ceiling and contentd's content operations, each on a
// fresh server process with its own data directory, 32 connections, API-key auth.
import { request } from 'node:http'
import { join } from 'node:path'
import { PATH_OPERATIONS } from '../../dist/shared/operation-table.js'
import { call, expectStatus, owner, startContentd } from '../lib/contentd.mjs'
import { documentOfSize, valueOfSize } from '../lib/documents.mjs'
import { eventLoopDelayReader, measure, measureInterleaved, RATIO_DURATION_S } from '../lib/load.mjs'
import { PROJECT_ROOT, freePort, startChild } from '../lib/processes.mjs'
import { baselineBuild } from '../lib/baseline.mjs'

const KiB = 1024
const MiB = 1024 * KiB
// Just under the default BODY_LIMIT (1 MiB), so the document can be sent in one update.
const ONE_MIB_DOCUMENT = MiB - 512
const HOT_REQUESTS = Number(process.env.BENCH_HOT_REQUESTS ?? 20_000)

// What Chromium sends.
const BROWSER_ACCEPT_ENCODING = 'gzip, deflate, br, zstd'

const INCREMENT_BODY = JSON.stringify({ path: 'counter', value: 1 })

// Each HTTP scenario in two steps: `prepare` starts its server(s) and data and returns what
// to load (`load`, measure()'s options), how to judge the measured result (`finish`) and how
// to stop; measure() runs alone, measureInterleaved() runs the ratio scenarios side by side.

async function prepareCeiling () {
  const port = await freePort()
  const server = await startChild({ name: 'bare express', args: [join(PROJECT_ROOT, 'bench/ceiling-server.mjs')], env: { PORT: String(port) }, port })
  try {
    const check = await expectStatus(call(server.url, 'POST', '/api/@bench/demo/content/increment', { token: 'ck_unused', body: { path: 'counter' } }), 200, 'ceiling')
    if (check.body.message !== PATH_OPERATIONS.increment.message) throw new Error('ceiling answers the wrong body')
  } catch (error) {
    await server.stop()
    throw error
  }
  return {
    load: { url: `${server.url}/api/@bench/demo/content/increment`, headers: { authorization: 'Bearer ck_unused' }, body: INCREMENT_BODY, pid: server.pid },
    finish: async result => ({ scenario: 'ceiling: bare Express 5, same JSON POST', ...result }),
    stop: () => server.stop()
  }
}

/** Starts contentd with one project holding `content` (`root`: another tree's build, bench/lib/baseline.mjs). */
async function startWithProject (content, env = {}, root = undefined) {
  const server = await startContentd(env, [], { root })
  try {
    const user = await owner(server.url, 'bench')
    const path = await user.project('demo', content)
    return { server, key: user.key, session: user.session, path, url: server.url + path }
  } catch (error) {
    await server.stop()
    throw error
  }
}

/** Starts contentd with one project holding `content`, runs `body(ctx)`, stops it. */
async function withProject (content, body, env = {}) {
  const ctx = await startWithProject(content, env)
  try {
    return await body(ctx)
  } finally {
    await ctx.server.stop()
  }
}

async function readCounter (ctx) {
  const r = await expectStatus(call(ctx.server.url, 'GET', `${ctx.path}/content?path=counter`, { token: ctx.key }), 200, 'read counter')
  return r.body
}

// A schema covering every value of documentOfSize's documents (docs/schema.md): the increment
// with it is checked on each write, at the cost the goal bounds.
const DOCUMENT_SCHEMA = {
  type: 'object',
  required: ['counter', 'title', 'items'],
  additionalProperties: false,
  properties: {
    counter: { type: 'integer', minimum: 0 },
    title: { type: 'string', maxLength: 200 },
    items: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'name', 'tags', 'score', 'active'],
        additionalProperties: false,
        properties: {
          id: { type: 'integer', minimum: 0 },
          name: { type: 'string' },
          tags: { type: 'array', items: { type: 'string' } },
          score: { type: 'number' },
          active: { type: 'boolean' }
        }
      }
    }
  }
}

// The increment servers expose /metrics to the bench: their event-loop delay is read around each run.
const METRICS_TOKEN = 'bench-metrics-token-http'

async function prepareIncrement (scenario, bytes, { schema, env = {} } = {}) {
  const ctx = await startWithProject(documentOfSize(bytes), { METRICS_TOKEN, ...env })
  let before
  try {
    if (schema) await expectStatus(call(ctx.server.url, 'PUT', `${ctx.path}/schema`, { token: ctx.session, body: schema }), 200, 'set schema')
    before = await readCounter(ctx)
  } catch (error) {
    await ctx.server.stop()
    throw error
  }
  return {
    load: { url: `${ctx.url}/content/increment`, headers: { authorization: `Bearer ${ctx.key}` }, body: INCREMENT_BODY, pid: ctx.server.pid, eventLoop: eventLoopDelayReader(ctx.server.url, METRICS_TOKEN) },
    async finish (result) {
      await new Promise(r => setTimeout(r, 300))
      const after = await readCounter(ctx)
      // Warm-up requests count too, and requests cut off when a run stops may still commit:
      // the counter can only have moved by more than the measured 2xx answers.
      const lost = after - before < result.ok
      return { scenario, ...result, failed: result.failed || lost, note: lost ? `counter moved ${after - before} < ${result.ok} acknowledged` : '' }
    },
    stop: () => ctx.server.stop()
  }
}

const PREPARE = {
  ceiling: prepareCeiling,
  increment1k: () => prepareIncrement('increment, 1 KiB content', KiB),
  increment1m: () => prepareIncrement('increment, 1 MiB content', ONE_MIB_DOCUMENT),
  increment1mSchema: () => prepareIncrement('increment, 1 MiB content with a schema covering it', ONE_MIB_DOCUMENT, { schema: DOCUMENT_SCHEMA }),
  // The reference for what the change log costs the write path (docs/change-log.md): the same
  // increments with HISTORY=off, which records no log and rewrites the document instead.
  increment1kNoHistory: () => prepareIncrement('increment, 1 KiB content, HISTORY=off (no change log)', KiB, { env: { HISTORY: 'off' } })
}

/** The scenarios whose req/s the goals compare with each other: measured interleaved. */
export const RATIO_SCENARIOS = Object.keys(PREPARE)

async function alone (name) {
  const prepared = await PREPARE[name]()
  try {
    return await prepared.finish(await measure(prepared.load))
  } finally {
    await prepared.stop()
  }
}

export const ceiling = () => alone('ceiling')
export const incrementSmall = () => alone('increment1k')
export const incrementLarge = () => alone('increment1m')
export const incrementLargeSchema = () => alone('increment1mSchema')
export const incrementSmallNoHistory = () => alone('increment1kNoHistory')

/**
 * The named ratio scenarios side by side: all their servers up at once (idle ones cost
 * nothing), then BENCH_ROUNDS alternating rounds over RATIO_DURATION_S seconds per scenario.
 * Returns results keyed by name.
 */
export async function ratioScenarios (names, rounds = Number(process.env.BENCH_ROUNDS ?? 5)) {
  const prepared = []
  try {
    for (const name of names) prepared.push(await PREPARE[name]())
    const measured = await measureInterleaved(prepared.map(p => p.load), rounds, RATIO_DURATION_S)
    const results = {}
    for (let i = 0; i < names.length; i++) results[names[i]] = await prepared[i].finish(measured[i])
    return results
  } finally {
    for (const p of prepared) await p.stop()
  }
}

export function setValue () {
  const body = JSON.stringify({ path: 'settings.blob', value: valueOfSize(KiB) })
  return withProject(documentOfSize(KiB), async ctx =>
    ({ scenario: 'set of a 1 KiB value', ...await measure({ url: `${ctx.url}/content/set`, headers: { authorization: `Bearer ${ctx.key}` }, body, pid: ctx.server.pid }) }))
}

/**
 * Set of a 100 KB object value (records, bench/lib/documents.mjs) at one path, over and over:
 * server CPU per request, this tree's build against the baseline's (BENCH_BASELINE_REF,
 * default 89649a9: issue 35's "today"), each on a fresh server with the same 1 KiB project,
 * warmed up together and measured in BENCH_ROUNDS alternating rounds as the increments are.
 */
export async function setLarge () {
  const body = JSON.stringify({ path: 'settings.blob', value: documentOfSize(100 * 1000) })
  let baseline
  let baselineError
  // Without the baseline (no git, a failed build) this build is still measured, and the row says why.
  try { baseline = baselineBuild() } catch (error) { baselineError = error instanceof Error ? error.message : String(error) }
  const sides = [{ variant: 'now', label: 'this build' }, ...(baseline ? [{ variant: 'baseline', label: `commit ${baseline.ref}`, root: baseline.root, ref: baseline.ref }] : [])]
  const started = []
  try {
    for (const side of sides) started.push(await startWithProject(documentOfSize(KiB), {}, side.root))
    const loads = started.map(ctx => ({ url: `${ctx.url}/content/set`, headers: { authorization: `Bearer ${ctx.key}` }, body, pid: ctx.server.pid }))
    const measured = await measureInterleaved(loads, Number(process.env.BENCH_ROUNDS ?? 5))
    const rows = sides.map((side, i) => ({ variant: side.variant, ref: side.ref, scenario: `set of a 100 KB value (${side.label})`, ...measured[i] }))
    return baselineError ? [...rows, { variant: 'baseline', scenario: 'set of a 100 KB value (baseline)', failed: true, error: baselineError }] : rows
  } finally {
    for (const ctx of started) await ctx.server.stop()
  }
}

export function push () {
  const body = JSON.stringify({ path: 'log', value: { n: 1 } })
  return withProject(documentOfSize(KiB), async ctx =>
    ({ scenario: 'push (small value onto a growing array)', ...await measure({ url: `${ctx.url}/content/push`, headers: { authorization: `Bearer ${ctx.key}` }, body, pid: ctx.server.pid }) }))
}

export function getLarge () {
  return withProject(documentOfSize(ONE_MIB_DOCUMENT), async ctx => {
    const first = await expectStatus(call(ctx.server.url, 'GET', `${ctx.path}/content`, { token: ctx.key }), 200, 'get')
    const etag = first.headers.get('etag')
    if (!etag || first.text.length < ONE_MIB_DOCUMENT - 1024) throw new Error(`get: unexpected answer (etag ${etag}, ${first.text.length} bytes)`)
    const auth = { authorization: `Bearer ${ctx.key}` }
    const load = headers => ({ url: `${ctx.url}/content`, method: 'GET', headers: { ...auth, ...headers }, pid: ctx.server.pid })
    // Compressed as browsers ask (docs/api.md#compressed-reads), uncompressed, and the 304: measured
    // interleaved, as the increments are, so their ratio is not the machine's drift.
    const [compressed, full, notModified] = await measureInterleaved([
      load({ 'accept-encoding': BROWSER_ACCEPT_ENCODING }),
      load({}),
      load({ 'accept-encoding': BROWSER_ACCEPT_ENCODING, 'if-none-match': etag })
    ], Number(process.env.BENCH_ROUNDS ?? 5))
    // 304 is the expected answer here; autocannon counts it as non-2xx, so check it ourselves.
    const only304 = Object.keys(notModified.statusCodes).every(code => code === '304') && notModified.errors === 0 && notModified.timeouts === 0
    return [
      { variant: 'compressed', scenario: `get of a 1 MiB content (200, Accept-Encoding: ${BROWSER_ACCEPT_ENCODING})`, ...compressed, note: await encodedSize(ctx, BROWSER_ACCEPT_ENCODING) },
      { variant: 'identity', scenario: 'get of a 1 MiB content (200, uncompressed)', ...full },
      { variant: '304', scenario: 'get of a 1 MiB content with If-None-Match (304)', ...notModified, ok: notModified.non2xx, non2xx: 0, failed: !only304 }
    ]
  })
}

/** What the server answers to `acceptEncoding`: its coding and size (fetch would decode it, so node:http). */
async function encodedSize (ctx, acceptEncoding) {
  return new Promise((resolve, reject) => {
    const req = request(`${ctx.url}/content`, { headers: { authorization: `Bearer ${ctx.key}`, 'accept-encoding': acceptEncoding } }, res => {
      let bytes = 0
      res.on('data', chunk => { bytes += chunk.length })
      res.on('end', () => resolve(`${res.headers['content-encoding'] ?? 'identity'}, ${Math.round(bytes / 1024)} KiB`))
    })
    req.on('error', reject)
    req.end()
  })
}

export function hotCounter () {
  return withProject(documentOfSize(KiB), async ctx => {
    const options = { url: `${ctx.url}/content/increment`, headers: { authorization: `Bearer ${ctx.key}` }, body: INCREMENT_BODY, connections: 64, pid: ctx.server.pid }
    await measure({ ...options, amount: 2000, warmup: false })
    const before = await readCounter(ctx)
    // A fixed number of requests, all answered, so the final value must match exactly.
    const result = await measure({ ...options, amount: HOT_REQUESTS, warmup: false })
    const after = await readCounter(ctx)
    const exact = after - before === result.ok
    return {
      scenario: `hot counter: 64 connections, one path, ${HOT_REQUESTS} requests`,
      ...result,
      failed: result.failed || !exact,
      note: `counter +${after - before}, 2xx ${result.ok}: ${exact ? 'equal' : 'MISMATCH'}`
    }
  })
}
