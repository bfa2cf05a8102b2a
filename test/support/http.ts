// A small HTTP client for tests: JSON in, {status, body, headers, text} out.
export interface CallOptions {
  token?: string
  body?: unknown
  /** Sent as-is instead of JSON.stringify(body). */
  raw?: string | Uint8Array
  headers?: Record<string, string>
}

export interface CallResult<T = any> {
  status: number
  body: T
  text: string
  headers: Headers
}

/** Sees every answer `call` gets, after it is read (test/api/openapi-check.ts checks each against /openapi.json). */
export type ResponseObserver = (request: { base: string, method: string, path: string }, response: CallResult) => void | Promise<void>
const observers = new Set<ResponseObserver>()

/** Adds an observer; the function returned removes it. */
export function observeResponses (observer: ResponseObserver): () => void {
  observers.add(observer)
  return () => { observers.delete(observer) }
}

export async function call<T = any> (base: string, method: string, path: string, options: CallOptions = {}): Promise<CallResult<T>> {
  const headers: Record<string, string> = { ...options.headers }
  if (options.token) headers.authorization = `Bearer ${options.token}`
  let payload: string | Uint8Array | undefined
  if (options.raw !== undefined) payload = options.raw
  else if (options.body !== undefined) {
    payload = JSON.stringify(options.body)
    headers['content-type'] ??= 'application/json'
  }
  const response = await fetch(base + path, { method, headers, body: payload as BodyInit | undefined })
  const text = await response.text()
  let body: any
  try { body = text ? JSON.parse(text) : undefined } catch { body = undefined }
  const result = { status: response.status, body, text, headers: response.headers }
  for (const observer of observers) await observer({ base, method, path }, result)
  return result
}

export const PASSWORD = 'correct horse battery staple'

/** Signs a user up and returns the session token. */
export async function signup (base: string, username: string, password = PASSWORD): Promise<string> {
  const r = await call(base, 'POST', '/api/auth/signup', { body: { username, password } })
  if (r.status !== 201) throw new Error(`signup ${username}: ${r.status} ${r.text}`)
  return r.body.token as string
}

export async function createProject (base: string, token: string, slug: string): Promise<void> {
  const r = await call(base, 'POST', '/api/projects', { token, body: { slug } })
  if (r.status !== 201) throw new Error(`create project ${slug}: ${r.status} ${r.text}`)
}

export async function createKey (base: string, token: string, spec: Record<string, unknown>): Promise<{ id: string, key: string }> {
  const r = await call(base, 'POST', '/api/keys', { token, body: spec })
  if (r.status !== 201) throw new Error(`create key: ${r.status} ${r.text}`)
  return r.body
}

/** A user with one project and a write key: the usual starting point of a scenario. */
export async function ownerWithProject (base: string, username: string, slug = 'demo') {
  const session = await signup(base, username)
  await createProject(base, session, slug)
  const { key, id: keyId } = await createKey(base, session, { name: 'writer', permission: 'write' })
  const path = `/api/@${username}/${slug}`
  return { session, key, keyId, path }
}
