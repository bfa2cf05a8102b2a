// contentd as a child process (the built dist/server/index.js) and the HTTP calls a scenario
// needs to prepare its data: signup, project, API key, content.
import { join } from 'node:path'
import { PROJECT_ROOT, freePort, startChild, tempDir } from './processes.mjs'

/**
 * `options.dataDir`: a directory another node already uses (then this node does not remove it);
 * `options.root`: another tree's build to run (bench/lib/baseline.mjs), not this one's.
 */
export async function startContentd (env = {}, nodeArgs = [], options = {}) {
  const port = await freePort()
  const dataDir = options.dataDir ?? tempDir('data')
  const root = options.root ?? PROJECT_ROOT
  const server = await startChild({
    name: root === PROJECT_ROOT ? 'contentd' : `contentd (${root})`,
    args: [...nodeArgs, join(root, 'dist/server/index.js')],
    cwd: root,
    env: { PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, RATE_LIMIT: '0', LOG_LEVEL: 'warn', ...env },
    port,
    readyPath: '/healthz',
    cleanup: options.dataDir ? [] : [dataDir]
  })
  return { ...server, dataDir }
}

export async function call (base, method, path, { token, body, headers = {}, signal } = {}) {
  const sent = { ...headers }
  if (token) sent.authorization = `Bearer ${token}`
  let payload
  if (body !== undefined) {
    payload = JSON.stringify(body)
    sent['content-type'] = 'application/json'
  }
  const response = await fetch(base + path, { method, headers: sent, body: payload, signal })
  const text = await response.text()
  let json
  try { json = text ? JSON.parse(text) : undefined } catch { json = undefined }
  return { status: response.status, body: json, text, headers: response.headers }
}

export async function expectStatus (promise, status, what) {
  const result = await promise
  if (result.status !== status) throw new Error(`${what}: expected ${status}, got ${result.status} ${result.text.slice(0, 300)}`)
  return result
}

/**
 * `count` increments of `counter` in the project at `path`, one at a time, `paceMs` apart: when
 * each version's request was sent and when its answer came (performance.now(), by version).
 */
export async function pacedIncrements (base, path, token, count, paceMs) {
  const sentAt = new Map()
  const answeredAt = new Map()
  for (let i = 0; i < count; i++) {
    const started = performance.now()
    const r = await expectStatus(call(base, 'POST', `${path}/content/increment`, { token, body: { path: 'counter' } }), 200, 'increment')
    const version = Number(JSON.parse(r.headers.get('etag')))
    sentAt.set(version, started)
    answeredAt.set(version, performance.now())
    await new Promise(resolve => setTimeout(resolve, paceMs))
  }
  return { sentAt, answeredAt }
}

const PASSWORD = 'benchmark password 1234'

/** A user with a session and a write API key; projects are created with `project()`. */
export async function owner (base, username) {
  const signup = await expectStatus(call(base, 'POST', '/api/auth/signup', { body: { username, password: PASSWORD } }), 201, 'signup')
  const session = signup.body.token
  const created = await expectStatus(call(base, 'POST', '/api/keys', { token: session, body: { name: 'bench', permission: 'write' } }), 201, 'create key')
  const key = created.body.key
  return {
    session,
    key,
    async project (slug, content) {
      await expectStatus(call(base, 'POST', '/api/projects', { token: session, body: { slug } }), 201, `create project ${slug}`)
      const path = `/api/@${username}/${slug}`
      if (content !== undefined) await expectStatus(call(base, 'POST', `${path}/content`, { token: key, body: content }), 200, `content of ${slug}`)
      return path
    }
  }
}
