// A batch and a patch reach subscribers as ONE `change` each (docs/design.md §10): the same
// entry as the change log's, with `operations`; replayed over the subscribe snapshot with the
// shared code they give the stored content. A failed batch broadcasts nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applyContentOperation } from '../../shared/compound.js'
import { operationOfChange } from '../../shared/events.js'
import type { JsonObject } from '../../shared/json.js'
import { call, ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { connect, Recorder, subscribe } from './client.js'

let app: TestApp
beforeAll(async () => { app = await startTestApp({}, { realtime: true }) })
afterAll(async () => { await app.close() })

describe('batches and patches over Socket.IO', () => {
  it('broadcasts one change per batch or patch, as logged, and nothing for a failed one', async () => {
    const { key, path } = await ownerWithProject(app.url, 'rio')
    const recorder = new Recorder(await connect(app.url, key))
    const ack = await subscribe(recorder.socket, '@rio/demo')
    if (!ack.ok) throw new Error(ack.code)
    const batch = await call(app.url, 'POST', `${path}/content/batch`, { token: key, body: { operations: [{ op: 'set', path: 'todo', value: ['a', 'b'] }, { op: 'increment', path: 'n', value: 2 }] } })
    expect(batch.status).toBe(200)
    const failed = await call(app.url, 'POST', `${path}/content/batch`, { token: key, body: { operations: [{ op: 'increment', path: 'n' }, { op: 'test', path: 'n', value: 0 }] } })
    expect(failed.status).toBe(409)
    const patch = await call(app.url, 'PATCH', `${path}/content`, { token: key, headers: { 'content-type': 'application/json-patch+json' }, body: [{ op: 'move', from: '/todo/0', path: '/done' }] })
    expect(patch.status).toBe(200)
    await recorder.untilVersion(2)
    expect(recorder.changes.map(c => [c.version, c.op])).toEqual([[1, 'batch'], [2, 'patch']])
    const logged = await call(app.url, 'GET', `${path}/content/changes`, { token: key })
    expect(recorder.changes).toEqual(logged.body.changes)
    if (!('content' in ack)) throw new Error('a subscribe without since answers a snapshot')
    let doc: JsonObject = structuredClone(ack.content)
    for (const change of recorder.changes) doc = applyContentOperation(doc, operationOfChange(change))
    expect(doc).toEqual((await call(app.url, 'GET', `${path}/content`, { token: key })).body)
    expect(doc).toEqual({ todo: ['b'], n: 2, done: 'a' })
    recorder.socket.close()
  })
})
