// The console's LiveDocument on the real SDK against a real server: it follows the content,
// bumps revisions only along changed paths, keeps the recent changes a conflict shows, and
// tells its view once per frame however many changes arrived.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LiveDocument } from '../../console/content/live-document.js'
import { createClient, type ContentdClient } from '../../shared/client/index.js'
import { ownerWithProject } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'

let app: TestApp
let client: ContentdClient

beforeAll(async () => {
  app = await startTestApp({}, { realtime: true })
  const { key } = await ownerWithProject(app.url, 'livedoc')
  client = createClient({ baseUrl: app.url, token: key })
})
afterAll(async () => {
  client.close()
  await app.close()
})

/** A frame scheduler the test runs by hand. */
function frames () {
  const queued: Array<() => void> = []
  return { schedule: (run: () => void) => { queued.push(run) }, run: () => { for (const f of queued.splice(0)) f() }, get pending () { return queued.length } }
}

async function until (condition: () => boolean): Promise<void> {
  for (let i = 0; i < 250 && !condition(); i++) await new Promise(r => setTimeout(r, 10))
  expect(condition()).toBe(true)
}

describe('LiveDocument', () => {
  it('follows the content and marks what changed', async () => {
    const project = client.project('@livedoc/demo')
    await project.update({ a: { b: 1, c: 2 }, list: [] })
    const frame = frames()
    const doc = new LiveDocument(project, frame.schedule)
    let updates = 0
    doc.onUpdate(() => { updates++ })
    doc.start()
    await until(() => doc.state === 'live')
    const start = doc.version as number
    const epoch = doc.revisions.epoch
    expect(doc.content).toEqual({ a: { b: 1, c: 2 }, list: [] })
    frame.run()
    expect(updates).toBe(1)
    expect(doc.takeFlashes()).toEqual([])

    // Three changes before the next frame: one notification.
    await project.increment('a.b')
    await project.push('list', 'x')
    const { version } = await project.set('a.c', 5)
    await until(() => doc.version === version)
    expect(frame.pending).toBe(1)
    frame.run()
    expect(updates).toBe(2)
    expect(doc.content).toEqual({ a: { b: 2, c: 5 }, list: ['x'] })
    expect(doc.takeFlashes()).toEqual(['a.b', 'list', 'a.c'])
    expect(doc.revisions.epoch).toBe(epoch)
    expect(doc.revisions.of('a.b')).toBeGreaterThan(0)
    expect(doc.revisions.of('a')).toBe(doc.revisions.of('a.c'))
    expect(doc.revisions.of('list.0')).toBe(0)
    expect(doc.changesSince(start).map(c => [c.op, c.path])).toEqual([['increment', 'a.b'], ['push', 'list'], ['set', 'a.c']])
    expect(doc.changesSince(start + 2).map(c => c.path)).toEqual(['a.c'])

    // A whole-content update starts a new epoch.
    const replaced = await project.update({ fresh: true })
    await until(() => doc.version === replaced.version)
    expect(doc.revisions.epoch).toBe(epoch + 1)
    expect(doc.content).toEqual({ fresh: true })
    doc.close()
  })

  it('reports the end of its subscription', async () => {
    const doc = new LiveDocument(client.project('@livedoc/missing'), run => run())
    doc.start()
    await until(() => doc.state === 'ended')
    expect(doc.error).toMatchObject({ status: 404, code: 'PROJECT_NOT_FOUND' })
    doc.close()
  })
})
