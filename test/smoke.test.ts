import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SUCCESS_MESSAGES } from '../shared/operation-table.js'
import { call, ownerWithProject } from './support/http.js'
import { startTestApp, type TestApp } from './support/temp-app.js'

describe('smoke: signup → project → key → increment → get', () => {
  let app: TestApp
  beforeAll(async () => { app = await startTestApp() })
  afterAll(async () => { await app.close() })

  it('changes content with an API key and reads it back', async () => {
    const { key, path } = await ownerWithProject(app.url, 'alice')
    const r = await call(app.url, 'POST', `${path}/content/increment`, { token: key, body: { path: 'data.item.count', value: 5 } })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ message: SUCCESS_MESSAGES.increment })
    expect(r.headers.get('etag')).toBe('"1"')
    const got = await call(app.url, 'GET', `${path}/content`, { token: key })
    expect(got.body).toEqual({ data: { item: { count: 5 } } })
  })
})
