// createNode's wiring (server/node.ts): one feed for every transport. A Socket.IO room and an
// SSE stream listen to the node's feed exactly while they have someone to send to; the node
// has no relay without Redis; close() ends the open streams.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ownerWithProject } from '../support/http.js'
import { openEvents } from '../support/sse.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { until } from '../support/wait.js'
import { connect, subscribe } from '../realtime/client.js'

describe('createNode', () => {
  let app: TestApp

  beforeAll(async () => {
    app = await startTestApp({}, { realtime: true })
  })
  afterAll(async () => {
    await app?.close()
  })

  it('hands the services, the app and Socket.IO the same feed; no relay without Redis', () => {
    expect(app.node.feed).toBe(app.services.feed)
    expect(app.node.relay).toBeNull()
    expect(app.node.realtime).toBe(app.realtime)
  })

  it('a Socket.IO room listens to the feed while it has subscribers, and stops after the last leaves', async () => {
    const owner = await ownerWithProject(app.url, 'roomy')
    const projectId = (await app.services.projects.find('@roomy', 'demo')).id
    expect(app.node.feed.hasSubscribers(projectId)).toBe(false)
    const socket = await connect(app.url, owner.key)
    try {
      expect(await subscribe(socket, '@roomy/demo')).toMatchObject({ ok: true })
      expect(app.node.feed.hasSubscribers(projectId)).toBe(true)
      const reply = await socket.timeout(5000).emitWithAck('unsubscribe', { project: '@roomy/demo' })
      expect(reply).toEqual({ ok: true })
      expect(app.node.feed.hasSubscribers(projectId)).toBe(false)
    } finally {
      socket.disconnect()
    }
  })

  it('an SSE stream listens to the feed while open, and close() ends it', async () => {
    const owner = await ownerWithProject(app.url, 'streamy')
    const projectId = (await app.services.projects.find('@streamy', 'demo')).id
    const stream = await openEvents(app.url, `${owner.path}/content/events`, { token: owner.key })
    expect(stream.status).toBe(200)
    await stream.until(() => stream.events.some(e => e.event === 'snapshot'), 'the snapshot')
    expect(app.node.feed.hasSubscribers(projectId)).toBe(true)
    expect(app.services.openStreams.count).toBe(1)
    await app.node.close()
    await stream.until(() => stream.ended, 'the stream ends at close')
    await until(() => !app.node.feed.hasSubscribers(projectId), 'the stream stops listening')
    expect(app.services.openStreams.count).toBe(0)
  })
})
