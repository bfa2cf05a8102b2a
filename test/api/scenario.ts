// PocketBase-style API scenarios: one row per request, with what must come back and what the
// project content must look like afterwards. A runner resets the content before each row,
// sends the request and checks status, code, body, headers, content and version.
import { expect } from 'vitest'
import { call, type CallResult } from '../support/http.js'
import { PROJECT } from './fixture.js'

export interface Scenario<F> {
  name: string
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH'
  /** A function gets the content's version before the request (for `?version=`, `since`). */
  url: string | ((fixture: F, version: number) => string)
  token: (fixture: F) => string | undefined
  body?: unknown
  /** The body from the content's version before the request (a revert's `version`); replaces `body`. */
  bodyAt?: (version: number) => unknown
  /** Sent as-is instead of JSON (for invalid JSON and prototype keys). */
  raw?: string | Uint8Array
  headers?: Record<string, string> | ((fixture: F, version: number) => Record<string, string>)
  /** Content written (by the owner's session) before the request; default: the runner's base. */
  before?: Record<string, unknown>
  /** Runs before the content is reset (to set or remove a project's schema, say). */
  prepare?: (url: string, fixture: F) => Promise<void>
  expectStatus: number
  expectCode?: string
  /** A failed batch or patch names its failing operation's index (docs/design.md §10). */
  expectOperation?: number
  expectBody?: unknown
  expectHeaders?: Record<string, string | RegExp>
  /**
   * The version a 2xx or 304 answer's ETag names, from the version before the request; default: the
   * version after it (what a write created, what a read saw). A past version's read differs.
   */
  expectEtag?: (versionBefore: number) => number
  /** Content afterwards; for any non-2xx it defaults to "unchanged". */
  expectContent?: unknown
}

export interface ScenarioTarget<F> {
  url: () => string
  fixture: () => F
  /** Session of the project's owner, used to reset and read the content. */
  ownerSession: (fixture: F) => string
  /** The project whose content is reset and checked, e.g. /api/@alice/demo. */
  projectPath: string
  base: Record<string, unknown>
}

/** The usual target: @alice/demo (fixture.ts's PROJECT), reset and read by its owner's session. */
export function ownerTarget<F extends { ownerSession: string }> (url: () => string, fixture: () => F, base: Record<string, unknown>): ScenarioTarget<F> {
  return { url, fixture, ownerSession: f => f.ownerSession, projectPath: PROJECT, base }
}

async function readContent (url: string, projectPath: string, token: string): Promise<{ content: unknown, version: number }> {
  const r = await call(url, 'GET', `${projectPath}/content`, { token })
  expect(r.status).toBe(200)
  return { content: r.body, version: Number(JSON.parse(r.headers.get('etag') ?? 'null')) }
}

/**
 * Every error is {message, code} as JSON (with `operation` when one operation of a batch or
 * patch failed; SCHEMA_VIOLATION adds its `errors`, each a {path, message}), and a 401 tells
 * the client how to authenticate.
 */
export function expectErrorShape (r: CallResult, code?: string, operation?: number): void {
  expect(r.headers.get('content-type')).toMatch(/^application\/json/)
  expect(typeof r.body?.message).toBe('string')
  expect(r.body.message.length).toBeGreaterThan(0)
  const expectedKeys = ['code', 'message']
  if (r.body.code === 'SCHEMA_VIOLATION') {
    expectedKeys.push('errors')
    expect(r.body.errors.length).toBeGreaterThan(0)
    for (const error of r.body.errors) expect(error).toEqual({ path: expect.any(String), message: expect.any(String) })
  }
  if (operation !== undefined) expectedKeys.push('operation')
  // An app user's refusal names the refused path (docs/design.md §17).
  if (r.body.code === 'RULES_DENIED') {
    expectedKeys.push('path')
    expect(typeof r.body.path).toBe('string')
  }
  expect(Object.keys(r.body).sort()).toEqual(expectedKeys.sort())
  if (operation !== undefined) expect(r.body.operation).toBe(operation)
  if (code !== undefined) expect(r.body.code).toBe(code)
  if (r.status === 401) expect(r.headers.get('www-authenticate')).toMatch(/^Bearer/)
}

export async function runScenario<F> (target: ScenarioTarget<F>, s: Scenario<F>): Promise<CallResult> {
  const url = target.url()
  const fixture = target.fixture()
  const owner = target.ownerSession(fixture)
  await s.prepare?.(url, fixture)
  const reset = await call(url, 'POST', `${target.projectPath}/content`, { token: owner, body: s.before ?? target.base })
  expect(reset.status).toBe(200)
  const before = await readContent(url, target.projectPath, owner)

  const token = s.token(fixture)
  const headers = typeof s.headers === 'function' ? s.headers(fixture, before.version) : s.headers
  const path = typeof s.url === 'function' ? s.url(fixture, before.version) : s.url
  const r = await call(url, s.method, path, {
    ...(token !== undefined ? { token } : {}),
    ...(s.raw !== undefined ? { raw: s.raw, headers: { 'content-type': 'application/json', ...headers } } : { body: s.bodyAt ? s.bodyAt(before.version) : s.body, ...(headers ? { headers } : {}) })
  })

  expect(r.status, `${s.name}: ${r.text}`).toBe(s.expectStatus)
  if (r.status >= 400) expectErrorShape(r, s.expectCode, s.expectOperation)
  else if (s.expectCode !== undefined) throw new Error(`${s.name}: expectCode given for a success`)
  if (s.expectBody !== undefined) expect(r.body).toEqual(s.expectBody)
  for (const [name, value] of Object.entries(s.expectHeaders ?? {})) {
    if (typeof value === 'string') expect(r.headers.get(name)).toBe(value)
    else expect(r.headers.get(name)).toMatch(value)
  }

  const after = await readContent(url, target.projectPath, owner)
  const succeeded = r.status >= 200 && r.status < 300
  const isContent = path.toLowerCase().startsWith(`${target.projectPath}/content`.toLowerCase())
  const isWrite = s.method !== 'GET' && isContent
  if (s.expectContent !== undefined) expect(after.content).toEqual(s.expectContent)
  else if (!succeeded) expect(after.content).toEqual(before.content)
  else if (isWrite) throw new Error(`${s.name}: a successful write needs expectContent`)
  // Every successful change adds exactly 1 to the version; a failure adds nothing.
  expect(after.version).toBe(before.version + (succeeded && isWrite ? 1 : 0))
  // A write answers with the version it created; a read with the version it saw.
  const etag = s.expectEtag ? s.expectEtag(before.version) : after.version
  if (isContent && (succeeded || r.status === 304)) expect(r.headers.get('etag')).toBe(`"${etag}"`)
  return r
}
