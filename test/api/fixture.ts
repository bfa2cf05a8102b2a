// The cast of the content scenarios: an owner with two projects, a viewer and an editor of
// one of them, a stranger, and API keys of every kind (write, read-only, scoped to the other
// project, expired, revoked, the stranger's).
import { manualClock, type ManualClock } from '../support/clock.js'
import { call, createKey, createProject, signup } from '../support/http.js'
import { startTestApp, type TestApp, type TestAppOptions } from '../support/temp-app.js'

export interface ContentFixture {
  ownerSession: string
  writeKey: string
  readKey: string
  otherProjectKey: string
  expiredKey: string
  revokedKey: string
  editorSession: string
  viewerSession: string
  strangerSession: string
  strangerKey: string
}

/** The project every content scenario acts on. */
export const PROJECT = '/api/@alice/demo'

const EXPIRY_MS = 60_000

/** `clock` is the app's (startTestApp's `clock` option): the fixture moves it past a key's expiry. */
async function makeContentFixture (url: string, clock: ManualClock): Promise<ContentFixture> {
  const ownerSession = await signup(url, 'alice')
  const expiresAt = clock.now() + EXPIRY_MS
  const expiredKey = (await createKey(url, ownerSession, { name: 'short-lived', permission: 'write', expiresAt: new Date(expiresAt).toISOString() })).key
  await createProject(url, ownerSession, 'demo')
  await createProject(url, ownerSession, 'other')
  const writeKey = (await createKey(url, ownerSession, { name: 'writer', permission: 'write' })).key
  const readKey = (await createKey(url, ownerSession, { name: 'reader', permission: 'read' })).key
  const otherProjectKey = (await createKey(url, ownerSession, { name: 'other only', permission: 'write', projects: ['@alice/other'] })).key
  const revoked = await createKey(url, ownerSession, { name: 'revoked', permission: 'write' })
  const revoke = await call(url, 'DELETE', `/api/keys/${revoked.id}`, { token: ownerSession })
  if (revoke.status !== 200) throw new Error(`revoke: ${revoke.status} ${revoke.text}`)

  const editorSession = await signup(url, 'dave')
  const viewerSession = await signup(url, 'carol')
  const strangerSession = await signup(url, 'bob')
  await createProject(url, strangerSession, 'demo')
  const strangerKey = (await createKey(url, strangerSession, { name: 'bob writer', permission: 'write' })).key
  for (const [member, role] of [['dave', 'editor'], ['carol', 'viewer']] as const) {
    const r = await call(url, 'PUT', `${PROJECT}/members/${member}`, { token: ownerSession, body: { role } })
    if (r.status !== 200) throw new Error(`member ${member}: ${r.status} ${r.text}`)
  }

  clock.advance(EXPIRY_MS)
  return { ownerSession, writeKey, readKey, otherProjectKey, expiredKey, revokedKey: revoked.key, editorSession, viewerSession, strangerSession, strangerKey }
}

/** An app on a manual clock with the content cast made in it (`options.clock` is this one). */
export async function startContentApp (env: Record<string, string> = {}, options: Omit<TestAppOptions, 'clock'> = {}): Promise<{ app: TestApp, fixture: ContentFixture }> {
  const clock = manualClock()
  const app = await startTestApp(env, { ...options, clock })
  return { app, fixture: await makeContentFixture(app.url, clock) }
}
