// [rules, issue 31] App users' reads and subscriptions on every transport, from one table
// (test/rules/read-table.ts): each row's one expected outcome — allowed, with the value at its
// path or its query's result, or 403 RULES_DENIED naming its path — is checked over HTTP
// (the one-shot GET, `changes?path=`), Socket.IO (a real socket.io-client: path and query
// subscriptions, docs/design.md §15, §16) and Server-Sent Events (a fetch stream:
// `events?path=` with and without a query, `?access_token=`). Then what only a live stream
// has: changes delivered, a change of rules re-deciding it, the token's expiry ending it.
// On every store: SQLite (with and without its document cache) and MongoDB with MONGODB_URI.
import type { Socket } from 'socket.io-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { APP_AUDIENCE, APP_ISSUER, APP_SECRET, hs256Token } from '../support/app-tokens.js'
import { call, createProject, signup } from '../support/http.js'
import { openEvents, type SseStream } from '../support/sse.js'
import { startAppOnStore, type AppOnStore } from '../support/app-on-store.js'
import { storeFactories } from '../support/stores.js'
import { queryString, READ_CONTENT, READ_ROWS, READ_RULES, USERS, valueAt, type ReadRow, type User } from '../rules/read-table.js'
import { connect, Recorder } from './client.js'

const PROJECT = '/api/@alice/demo'
const REF = '@alice/demo'

const denied = (path: string) => ({ code: 'RULES_DENIED', path, message: expect.stringMatching(/^The project's rules do not allow this: read at /) })
/** The query string naming the row's path ('' : none, the whole project) and query. */
const pathQuery = (row: ReadRow) => row.path === '' ? '' : `path=${encodeURIComponent(row.path)}${row.query ? `&${queryString(row.query)}` : ''}`
const paramsAfter = (row: ReadRow, more = '') => { const q = [pathQuery(row), more].filter(Boolean).join('&'); return q === '' ? '' : `?${q}` }
/** What an allowed query answers: the row's keys, each with its value. */
const items = (row: ReadRow) => (row.query?.keys ?? []).map(key => ({ key, value: valueAt(row.path === '' ? key : `${row.path}.${key}`) }))
const wireQuery = (query: NonNullable<ReadRow['query']>) => ({ orderBy: query.orderBy, limit: query.limit, ...(query.direction ? { direction: query.direction } : {}) })

describe.each(storeFactories)('app users\' reads and subscriptions on every transport (docs/design.md §17), $name', { timeout: 120_000 }, (factory) => {
  let app: AppOnStore
  let owner: string
  const tokens = {} as Record<User, string>
  const sockets = {} as Record<User, Socket>
  const streams: SseStream[] = []

  beforeAll(async () => {
    app = await startAppOnStore(factory)
    owner = await signup(app.url, 'alice')
    await createProject(app.url, owner, 'demo')
    expect((await call(app.url, 'PUT', `${PROJECT}/auth`, { token: owner, body: { issuer: APP_ISSUER, audience: APP_AUDIENCE, hs256Secret: APP_SECRET } })).status).toBe(200)
    expect((await call(app.url, 'PUT', `${PROJECT}/rules`, { token: owner, body: READ_RULES })).status).toBe(200)
    expect((await call(app.url, 'POST', `${PROJECT}/content`, { token: owner, body: READ_CONTENT })).status).toBe(200)
    for (const user of Object.keys(USERS) as User[]) {
      tokens[user] = await hs256Token(USERS[user])
      sockets[user] = await connect(app.url, tokens[user])
    }
  })
  afterAll(async () => {
    for (const socket of Object.values(sockets)) socket.close()
    for (const stream of streams) stream.close()
    await app.close()
  })

  const subscribe = (user: User, request: Record<string, unknown>) =>
    sockets[user].timeout(10_000).emitWithAck('subscribe', { project: REF, ...request }) as Promise<Record<string, unknown>>
  const unsubscribe = (user: User, path: string) => sockets[user].timeout(10_000).emitWithAck('unsubscribe', { project: REF, path })

  describe('HTTP: the one-shot GET', () => {
    for (const row of READ_ROWS) {
      it(row.name, async () => {
        const r = await call(app.url, 'GET', `${PROJECT}/content${paramsAfter(row)}`, { token: tokens[row.user] })
        if (!row.allowed) {
          expect(r.status, r.text).toBe(403)
          expect(r.body).toEqual(denied(row.path))
        } else if (row.query) {
          expect(r.status, r.text).toBe(200)
          expect(r.body).toEqual({ version: expect.any(Number), items: items(row) })
        } else if (row.path === '') {
          expect(r.status, r.text).toBe(200)
          expect(r.body).toEqual(READ_CONTENT)
        } else if (valueAt(row.path) === undefined) {
          expect(r.status, r.text).toBe(404)
          expect(r.body.code).toBe('PATH_NOT_FOUND')
        } else {
          expect(r.status, r.text).toBe(200)
          expect(r.body).toEqual(valueAt(row.path))
        }
      })
    }
  })

  describe('HTTP: changes?path=', () => {
    for (const row of READ_ROWS.filter(r => !r.query)) {
      it(row.name, async () => {
        const r = await call(app.url, 'GET', `${PROJECT}/content/changes${paramsAfter(row)}`, { token: tokens[row.user] })
        if (!row.allowed) {
          expect(r.status, r.text).toBe(403)
          expect(r.body).toEqual(denied(row.path))
        } else if (row.path === '') {
          expect(r.status, r.text).toBe(200)
          expect(r.body.changes).toEqual([expect.objectContaining({ version: 1, op: 'update', value: READ_CONTENT })])
        } else {
          expect(r.status, r.text).toBe(200)
          // The owner's update wrote every path: it comes projected to the path (§15).
          expect(r.body.changes).toEqual([expect.objectContaining({ version: 1, path: row.path, projected: true, ...(valueAt(row.path) === undefined ? { op: 'delete' } : { op: 'set', value: valueAt(row.path) }) })])
        }
      })
    }
  })

  describe('Socket.IO: subscribe {project, path} and {project, path, query}', () => {
    for (const row of READ_ROWS) {
      it(row.name, async () => {
        const ack = await subscribe(row.user, row.path === '' ? {} : row.query ? { path: row.path, query: wireQuery(row.query) } : { path: row.path })
        try {
          if (!row.allowed) expect(ack).toEqual({ ok: false, ...denied(row.path) })
          else if (row.path === '') expect(ack).toMatchObject({ ok: true, project: REF, version: expect.any(Number), content: READ_CONTENT })
          else if (row.query) expect(ack).toMatchObject({ ok: true, project: REF, path: row.path, items: items(row) })
          else if (valueAt(row.path) === undefined) expect(ack).toEqual({ ok: true, project: REF, path: row.path, version: expect.any(Number), exists: false })
          else expect(ack).toEqual({ ok: true, project: REF, path: row.path, version: expect.any(Number), exists: true, value: valueAt(row.path) })
        } finally {
          if (ack.ok === true) await (row.path === '' ? sockets[row.user].timeout(10_000).emitWithAck('unsubscribe', { project: REF }) : unsubscribe(row.user, row.path))
        }
      })
    }
  })

  describe('Server-Sent Events: events?path= (and a query), ?access_token=', () => {
    for (const row of READ_ROWS) {
      it(row.name, async () => {
        const stream = await openEvents(app.url, `${PROJECT}/content/events${paramsAfter(row, `access_token=${encodeURIComponent(tokens[row.user])}`)}`)
        streams.push(stream)
        try {
          if (!row.allowed) {
            expect(stream.status, stream.body).toBe(403)
            expect(JSON.parse(stream.body)).toEqual(denied(row.path))
            return
          }
          expect(stream.status, stream.body).toBe(200)
          await stream.until(() => stream.events.length > 0, 'the snapshot')
          const first = stream.events[0]
          expect(first?.event).toBe('snapshot')
          const data = JSON.parse(first?.data ?? 'null') as unknown
          if (row.path === '') expect(data).toEqual({ version: expect.any(Number), content: READ_CONTENT })
          else if (row.query) expect(data).toEqual({ version: expect.any(Number), items: items(row) })
          else if (valueAt(row.path) === undefined) expect(data).toEqual({ version: expect.any(Number), path: row.path, exists: false })
          else expect(data).toEqual({ version: expect.any(Number), path: row.path, exists: true, value: valueAt(row.path) })
        } finally {
          stream.close()
        }
      })
    }
  })

  describe('live: changes, a change of rules, expiry', () => {
    const setRules = async (rules: unknown) => {
      const r = await call(app.url, 'PUT', `${PROJECT}/rules`, { token: owner, body: rules })
      expect(r.status, r.text).toBe(200)
    }
    const write = async (token: string, path: string, value: unknown) => {
      const r = await call(app.url, 'POST', `${PROJECT}/content/set`, { token, body: { path, value } })
      expect(r.status, r.text).toBe(200)
      return Number(JSON.parse(r.headers.get('etag') ?? '0'))
    }

    it('an allowed path subscription and path stream get the app user\'s own change; a change of rules that takes .read away ends both with RULES_DENIED naming the path', async () => {
      const socket = await connect(app.url, tokens.u2)
      const recorder = new Recorder(socket)
      const stream = await openEvents(app.url, `${PROJECT}/content/events?path=users.u2&access_token=${encodeURIComponent(tokens.u2)}`)
      const query = await openEvents(app.url, `${PROJECT}/content/events?path=users.u2&orderBy=key&limit=5&access_token=${encodeURIComponent(tokens.u2)}`)
      streams.push(stream, query)
      try {
        expect(await socket.timeout(10_000).emitWithAck('subscribe', { project: REF, path: 'users.u2' })).toMatchObject({ ok: true, exists: true })
        expect(await socket.timeout(10_000).emitWithAck('subscribe', { project: REF, path: 'users.u2', query: { orderBy: 'key', limit: 5 } })).toMatchObject({ ok: true })
        const queryEvents: unknown[] = []
        socket.on('query', (event: unknown) => queryEvents.push(event))
        const version = await write(tokens.u2, 'users.u2.name', 'live')
        await recorder.untilVersion(version)
        expect(recorder.changes.at(-1)).toMatchObject({ op: 'set', path: 'users.u2.name', value: 'live', subscription: 'users.u2', actor: { type: 'app', sub: 'u2' } })
        await stream.until(() => stream.changes().some(c => c.version === version), 'the change on the path stream')
        await query.until(() => query.events.some(e => e.event === 'query'), 'the query event on the query stream')
        await recorder.until(() => queryEvents.length > 0, 'the query event on the socket')

        // The same rules but users.$uid's .read: nobody reads users.u2 any more.
        await setRules({ rules: { ...READ_RULES.rules, users: { $uid: { '.write': 'auth.sub == uid' } } } })
        await recorder.until(() => recorder.revoked.length >= 2, 'both subscriptions revoked')
        expect(recorder.revoked).toEqual(expect.arrayContaining([
          expect.objectContaining({ code: 'RULES_DENIED', path: 'users.u2', project: REF })
        ]))
        expect(recorder.revoked.every(r => r.code === 'RULES_DENIED')).toBe(true)
        await stream.until(() => stream.ended, 'the path stream to end')
        expect(stream.events.at(-1)).toMatchObject({ event: 'revoked' })
        expect(JSON.parse(stream.events.at(-1)?.data ?? '{}')).toMatchObject({ code: 'RULES_DENIED', path: 'users.u2' })
        await query.until(() => query.ended, 'the query stream to end')
        expect(JSON.parse(query.events.at(-1)?.data ?? '{}')).toMatchObject({ code: 'RULES_DENIED', path: 'users.u2' })
        // Nothing at the path reaches the ended subscription afterwards.
        const before = recorder.changes.length
        await call(app.url, 'POST', `${PROJECT}/content/set`, { token: owner, body: { path: 'users.u2.name', value: 'hidden' } })
        await new Promise(resolve => setTimeout(resolve, 300))
        expect(recorder.changes.length).toBe(before)
      } finally {
        await setRules(READ_RULES)
        socket.close()
        stream.close()
        query.close()
      }
    })

    it('a whole-project subscription and stream end with RULES_DENIED (path "") when the root\'s .read goes', async () => {
      const socket = await connect(app.url, tokens.auditor)
      const recorder = new Recorder(socket)
      const stream = await openEvents(app.url, `${PROJECT}/content/events?access_token=${encodeURIComponent(tokens.auditor)}`)
      streams.push(stream)
      try {
        expect(stream.status, stream.body).toBe(200)
        expect(await socket.timeout(10_000).emitWithAck('subscribe', { project: REF })).toMatchObject({ ok: true })
        const { '.read': _root, ...below } = READ_RULES.rules
        await setRules({ rules: below })
        await recorder.until(() => recorder.revoked.length > 0, 'the subscription revoked')
        expect(recorder.revoked[0]).toMatchObject({ code: 'RULES_DENIED', path: '', project: REF })
        await stream.until(() => stream.ended, 'the stream to end')
        expect(stream.events.at(-1)?.event).toBe('revoked')
        expect(JSON.parse(stream.events.at(-1)?.data ?? '{}')).toMatchObject({ code: 'RULES_DENIED', path: '' })
      } finally {
        await setRules(READ_RULES)
        socket.close()
        stream.close()
      }
    })

    it('a change of rules that keeps .read keeps the subscription', async () => {
      const socket = await connect(app.url, tokens.u1)
      const recorder = new Recorder(socket)
      try {
        expect(await socket.timeout(10_000).emitWithAck('subscribe', { project: REF, path: 'leaderboard' })).toMatchObject({ ok: true })
        await setRules({ rules: { ...READ_RULES.rules, public: { '.read': 'false' } } })
        const version = await write(owner, 'leaderboard.u1.score', 6)
        await recorder.untilVersion(version)
        expect(recorder.revoked).toEqual([])
      } finally {
        await setRules(READ_RULES)
        socket.close()
      }
    })

    it('removing the trust setting ends an app user\'s path subscription with INVALID_TOKEN', async () => {
      const socket = await connect(app.url, tokens.u1)
      const recorder = new Recorder(socket)
      try {
        expect(await socket.timeout(10_000).emitWithAck('subscribe', { project: REF, path: 'public' })).toMatchObject({ ok: true })
        expect((await call(app.url, 'DELETE', `${PROJECT}/auth`, { token: owner })).status).toBe(200)
        await recorder.until(() => recorder.revoked.length > 0, 'the subscription revoked')
        expect(recorder.revoked[0]).toMatchObject({ code: 'INVALID_TOKEN', project: REF, path: 'public' })
      } finally {
        expect((await call(app.url, 'PUT', `${PROJECT}/auth`, { token: owner, body: { issuer: APP_ISSUER, audience: APP_AUDIENCE, hs256Secret: APP_SECRET } })).status).toBe(200)
        socket.close()
      }
    })

    it('a path subscription and a path stream end when the token expires (plus the 60 s leeway)', async () => {
      // Expired 58 s ago: valid for about 2 s more within the leeway.
      const token = await hs256Token(USERS.u1, { expiresIn: -58 })
      const socket = await connect(app.url, token)
      const recorder = new Recorder(socket)
      const stream = await openEvents(app.url, `${PROJECT}/content/events?path=users.u1&access_token=${encodeURIComponent(token)}`)
      streams.push(stream)
      try {
        expect(stream.status, stream.body).toBe(200)
        expect(await socket.timeout(10_000).emitWithAck('subscribe', { project: REF, path: 'users.u1' })).toMatchObject({ ok: true })
        await stream.until(() => stream.ended, 'the stream to end at expiry', 15_000)
        expect(JSON.parse(stream.events.at(-1)?.data ?? '{}')).toMatchObject({ code: 'INVALID_TOKEN' })
        await recorder.until(() => recorder.disconnectReason !== null, 'the socket to end at expiry', 15_000)
        expect(recorder.revoked.at(-1)).toMatchObject({ code: 'INVALID_TOKEN' })
      } finally {
        socket.close()
        stream.close()
      }
    })
  })
})
