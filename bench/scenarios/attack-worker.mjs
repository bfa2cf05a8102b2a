// One attacker of the attacks scenario (issue 26), in a process of its own so its work never
// shares the event loop that times the other user's requests. It gets its orders as its first
// message ({url, attack, username, reverts}), prepares what the attack needs (an account, a
// project, content, keys), says 'ready', attacks until told 'stop', and posts back what the
// server answered it, counted by outcome.
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import { connect } from 'node:net'
import { io } from 'socket.io-client'
import { call, expectStatus, owner } from '../lib/contentd.mjs'

const KiB = 1024
const orders = await new Promise(resolve => process.once('message', resolve))
const { url, attack, username } = orders
let running = true
const counts = {}
const count = (what) => { counts[what] = (counts[what] ?? 0) + 1 }
const statusOf = (what, status) => count(`${what} ${status}`)
const cleanups = []

process.on('message', message => { if (message === 'stop') running = false })
// Detached (a session of its own), so it must end itself when the benchmark goes away.
process.on('disconnect', () => process.exit(0))

/** A call that waits out 429s while preparing: the attack's setup must stay inside RATE_LIMIT. */
async function patiently (send) {
  for (;;) {
    const r = await send()
    if (r.status !== 429) return r
    await new Promise(resolve => setTimeout(resolve, Number(r.headers.get('retry-after') ?? 1) * 1000))
  }
}

async function loop (what, send) {
  while (running) {
    try { statusOf(what, (await send()).status) } catch { count(`${what} error`) }
  }
}

const user = await owner(url, username)
const path = await user.project('target', { counter: 0 })
const project = `@${username}/target`

/** 24 `copy` operations, each appending the array to itself: 2^24 × its size, in a 2 KB body. */
async function doublingPatch () {
  const patch = [{ op: 'add', path: '/x', value: ['y'.repeat(64)] }]
  for (let i = 0; i < 24; i++) patch.push({ op: 'copy', from: '/x', path: '/x/-' })
  const body = JSON.stringify(patch)
  return async () => {
    await loop('patch', async () => {
      const response = await fetch(`${url}${path}/content`, { method: 'PATCH', headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json-patch+json' }, body })
      await response.arrayBuffer()
      return response
    })
  }
}

/** An SSE request on a raw socket that is never read after it is sent. */
function stalledStream (streamPath, token) {
  return new Promise((resolve) => {
    const target = new URL(url)
    const socket = connect(Number(target.port), target.hostname, () => {
      socket.write(`GET ${streamPath} HTTP/1.1\r\nHost: ${target.host}\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n`)
      socket.pause()
      resolve(socket)
    })
    socket.on('error', () => count('stream error'))
    socket.on('close', () => count('stream closed by server'))
    cleanups.push(() => socket.destroy())
  })
}

/** 250 SSE streams that never read, then ~900 KB updates of the project they watch. */
async function slowReaders () {
  for (let i = 0; i < 250; i++) await stalledStream(`${path}/content/events`, user.key)
  const body = { counter: 0, blob: 'z'.repeat(900 * KiB) }
  return async () => {
    let n = 0
    await loop('update', () => { body.counter = ++n; return call(url, 'POST', `${path}/content`, { token: user.key, body }) })
  }
}

/** A ~7 MB content reverted `reverts` times (each entry holds the whole content), then read back by a read key. */
async function changePages () {
  const chunk = 'c'.repeat(880 * KiB)
  for (let i = 0; i < 8; i++) await expectStatus(patiently(() => call(url, 'POST', `${path}/content/set`, { token: user.key, body: { path: `m${i}`, value: chunk } })), 200, 'set chunk')
  const full = Number((await call(url, 'GET', `${path}/content`, { token: user.key })).headers.get('etag')?.replaceAll('"', ''))
  for (let i = 0; i < orders.reverts; i++) {
    const r = await patiently(() => call(url, 'POST', `${path}/content/revert`, { token: user.key, body: { version: full } }))
    statusOf('setup revert', r.status)
  }
  const readKey = (await expectStatus(call(url, 'POST', '/api/keys', { token: user.session, body: { name: 'reader', permission: 'read' } }), 201, 'read key')).body.key
  return async () => {
    const pages = loop('changes page', async () => {
      const response = await fetch(`${url}${path}/content/changes?since=0&limit=1000`, { headers: { authorization: `Bearer ${readKey}` } })
      await response.arrayBuffer()
      return response
    })
    const sse = loop('sse replay', async () => {
      const abort = new AbortController()
      const response = await fetch(`${url}${path}/content/events?since=0`, { headers: { authorization: `Bearer ${readKey}` }, signal: abort.signal })
      const reader = response.body.getReader()
      const until = Date.now() + 2000
      try { while (Date.now() < until && running) { const { done } = await reader.read(); if (done) break } } catch { /* aborted */ }
      abort.abort()
      return response
    })
    const socket = io(url, { auth: { token: readKey }, transports: ['websocket'], forceNew: true, reconnection: false })
    cleanups.push(() => socket.close())
    const since = loop('socket since', async () => {
      const ack = await socket.timeout(30_000).emitWithAck('subscribe', { project, since: 0 })
      if (ack.ok) await socket.timeout(30_000).emitWithAck('unsubscribe', { project })
      return { status: ack.ok ? 'ok' : ack.code }
    })
    await Promise.all([pages, sse, since])
  }
}

/** A schema, then writes that make its check expensive (or the schema's refusal, counted). */
async function schemaAttack (schema, write) {
  statusOf('put schema', (await call(url, 'PUT', `${path}/schema`, { token: user.session, body: schema })).status)
  return async () => { await loop('write', write) }
}

const ATTACKS = {
  patch: doublingPatch,
  slowReaders,
  changePages,
  // ajv-formats' url regex backtracks on a long run of "a:" with no "@".
  schemaUrl: () => schemaAttack(
    { type: 'object', properties: { s: { type: 'string', format: 'url' } } },
    () => call(url, 'POST', `${path}/content/set`, { token: user.key, body: { path: 's', value: 'http://' + 'a:'.repeat(30 * KiB) } })),
  schemaUnique: async () => {
    const list = Array.from({ length: 15_000 }, (_, i) => ({ id: i, name: `item ${i}` }))
    statusOf('set list', (await call(url, 'POST', `${path}/content/set`, { token: user.key, body: { path: 'list', value: list } })).status)
    let n = list.length
    // Each push asks again whether all 15,001 items differ.
    return schemaAttack(
      { type: 'object', properties: { list: { type: 'array', uniqueItems: true } } },
      () => call(url, 'POST', `${path}/content/push`, { token: user.key, body: { path: 'list', value: { id: n++, name: 'one more' } } }))
  },
  schemaCompile: async () => {
    const patternProperties = {}
    for (let i = 0; i < 2000; i++) patternProperties[`^p${i}(a|b)*[a-z]+$`] = { type: 'string' }
    const schema = { type: 'object', patternProperties }
    return async () => { await loop('put schema', () => call(url, 'PUT', `${path}/schema`, { token: user.session, body: schema })) }
  },
  webhooks: async () => {
    const sink = createServer((req, res) => { count('delivery'); req.resume(); req.on('end', () => res.end('ok')) })
    await new Promise(resolve => sink.listen(0, '127.0.0.1', resolve))
    cleanups.push(() => sink.close())
    for (let i = 0; i < 1000; i++) {
      statusOf('create webhook', (await patiently(() => call(url, 'POST', `${path}/webhooks`, { token: user.session, body: { url: `http://127.0.0.1:${sink.address().port}/${i}` } }))).status)
    }
    return async () => { await loop('write', () => call(url, 'POST', `${path}/content/increment`, { token: user.key, body: { path: 'counter' } })) }
  },
  idempotency: async () => async () => {
    await loop('keyed write', () => call(url, 'POST', `${path}/content/increment`, { token: user.key, body: { path: 'counter' }, headers: { 'idempotency-key': randomUUID() } }))
  }
}

const run = await ATTACKS[attack]()
process.send('ready')
await run()
for (const cleanup of cleanups) cleanup()
process.send(counts)
