// The HTTP scenarios: the bare-Express ceiling and contentd's content operations, each on a
// fresh server process with its own data directory, 32 connections, API-key auth.
import { join } from 'node:path'
import { call, expectStatus, owner, startContentd } from '../lib/contentd.mjs'
import { documentOfSize, valueOfSize } from '../lib/documents.mjs'
import { measure } from '../lib/load.mjs'
import { PROJECT_ROOT, freePort, startChild } from '../lib/processes.mjs'

const KiB = 1024
const MiB = 1024 * KiB
// Just under the default BODY_LIMIT (1 MiB), so the document can be sent in one update.
const ONE_MIB_DOCUMENT = MiB - 512
const HOT_REQUESTS = Number(process.env.BENCH_HOT_REQUESTS ?? 20_000)

const INCREMENT_BODY = JSON.stringify({ path: 'counter', value: 1 })

export async function ceiling () {
  const port = await freePort()
  const server = await startChild({ name: 'bare express', args: [join(PROJECT_ROOT, 'bench/ceiling-server.mjs')], env: { PORT: String(port) }, port })
  try {
    const url = `${server.url}/api/@bench/demo/content/increment`
    const check = await expectStatus(call(server.url, 'POST', '/api/@bench/demo/content/increment', { token: 'ck_unused', body: { path: 'counter' } }), 200, 'ceiling')
    if (check.body.message !== 'Value incremented successfully') throw new Error('ceiling answers the wrong body')
    return { scenario: 'ceiling: bare Express 5, same JSON POST', ...await measure({ url, headers: { authorization: 'Bearer ck_unused' }, body: INCREMENT_BODY, pid: server.pid }) }
  } finally {
    await server.stop()
  }
}

/** Starts contentd with one project holding `content`, runs `body(ctx)`, stops it. */
async function withProject (content, body, env = {}) {
  const server = await startContentd(env)
  try {
    const user = await owner(server.url, 'bench')
    const path = await user.project('demo', content)
    return await body({ server, key: user.key, path, url: server.url + path })
  } finally {
    await server.stop()
  }
}

async function readCounter (ctx) {
  const r = await expectStatus(call(ctx.server.url, 'GET', `${ctx.path}/content?path=counter`, { token: ctx.key }), 200, 'read counter')
  return r.body
}

async function incrementOn (scenario, bytes) {
  return withProject(documentOfSize(bytes), async ctx => {
    const before = await readCounter(ctx)
    const result = await measure({ url: `${ctx.url}/content/increment`, headers: { authorization: `Bearer ${ctx.key}` }, body: INCREMENT_BODY, pid: ctx.server.pid })
    await new Promise(r => setTimeout(r, 300))
    const after = await readCounter(ctx)
    // Requests cut off when the run stops may still commit, so `after` can only be larger.
    const lost = after - before < result.ok
    return { scenario, ...result, failed: result.failed || lost, note: lost ? `counter moved ${after - before} < ${result.ok} acknowledged` : '' }
  })
}

export const incrementSmall = () => incrementOn('increment, 1 KiB content', KiB)
export const incrementLarge = () => incrementOn('increment, 1 MiB content', ONE_MIB_DOCUMENT)

export function setValue () {
  const body = JSON.stringify({ path: 'settings.blob', value: valueOfSize(KiB) })
  return withProject(documentOfSize(KiB), async ctx =>
    ({ scenario: 'set of a 1 KiB value', ...await measure({ url: `${ctx.url}/content/set`, headers: { authorization: `Bearer ${ctx.key}` }, body, pid: ctx.server.pid }) }))
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
    const full = await measure({ url: `${ctx.url}/content`, method: 'GET', headers: { authorization: `Bearer ${ctx.key}` }, pid: ctx.server.pid })
    const notModified = await measure({ url: `${ctx.url}/content`, method: 'GET', headers: { authorization: `Bearer ${ctx.key}`, 'if-none-match': etag }, pid: ctx.server.pid })
    // 304 is the expected answer here; autocannon counts it as non-2xx, so check it ourselves.
    const only304 = Object.keys(notModified.statusCodes).every(code => code === '304') && notModified.errors === 0 && notModified.timeouts === 0
    return [
      { scenario: 'get of a 1 MiB content (200, full body)', ...full },
      { scenario: 'get of a 1 MiB content with If-None-Match (304)', ...notModified, ok: notModified.non2xx, non2xx: 0, failed: !only304 }
    ]
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
