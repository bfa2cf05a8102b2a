// Idempotency-Key on content writes (docs/design.md §10, after the IETF httpapi
// idempotency-key draft). The first request with a key claims it in the store (per project,
// caller and key); its answer is recorded before it is sent, so a retry that arrives after
// the client could have seen it is replayed (`Idempotent-Replayed: true`), never applied
// again. A different request under the same key is 422; a duplicate while the first still
// runs is 409. Only the write's own answers are kept (2xx, 400, 409, 412, 413, 422); for any
// other (401, 403, 404, 429, 5xx) the claim is released and a retry runs again. A node that
// dies while running a request leaves its claim `running` until IDEMPOTENCY_TTL: retries get
// 409 rather than risk applying twice. A user (all its sessions and keys) holds at most
// MAX_IDEMPOTENCY_KEYS_PER_USER live records (docs/design.md §13b): past it a new key is 429
// RATE_LIMITED with Retry-After, not applied; a key already stored still answers.
import { createHash } from 'node:crypto'
import type { Request, RequestHandler, Response } from 'express'
import { ContentdError } from '../../shared/errors.js'
import { isPlainObject } from '../../shared/json.js'
import { systemClock, type Clock } from '../clock.js'
import { usageBucketMs } from '../store/idempotency-usage.js'
import type { IdempotencyId, Store, StoredResponse } from '../store/types.js'
import { identityOf } from './auth-middleware.js'
import { context, projectOf } from './context.js'
import { loggedAnswer } from './logged-replay.js'

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key'
export const REPLAYED_HEADER = 'Idempotent-Replayed'

/** 1 to 255 visible ASCII characters (no spaces, no controls). */
const VALID_KEY = /^[\x21-\x7e]{1,255}$/
const KEPT_ERRORS = new Set([400, 409, 412, 413, 422])
/** Expired records are swept at most this often, by whichever request comes next. */
const SWEEP_INTERVAL_MS = 60_000
/** Deeper than any valid body (values nest at most 64 levels): refused before hashing. */
const MAX_FINGERPRINT_DEPTH = 100

export function isKeptStatus (status: number): boolean {
  return (status >= 200 && status < 300) || KEPT_ERRORS.has(status)
}

/** JSON with object members sorted, so bodies that are equal as JSON hash alike. */
export function canonicalJson (value: unknown, depth = 0): string {
  if (depth > MAX_FINGERPRINT_DEPTH) throw new ContentdError('INVALID_VALUE', `the body nests deeper than ${MAX_FINGERPRINT_DEPTH} levels`)
  if (Array.isArray(value)) return '[' + value.map(item => canonicalJson(item, depth + 1)).join(',') + ']'
  if (isPlainObject(value)) {
    return '{' + Object.keys(value).sort().map(key => JSON.stringify(key) + ':' + canonicalJson(value[key], depth + 1)).join(',') + '}'
  }
  return JSON.stringify(value) ?? 'null'
}

/** What makes two requests "the same": method, path and body compared as JSON. */
export function requestFingerprint (method: string, path: string, body: unknown): string {
  return createHash('sha256').update(`${method} ${path}\n`).update(canonicalJson(body)).digest('base64url')
}

function replay (res: Response, response: StoredResponse): void {
  res.status(response.status)
  res.setHeader('Content-Type', 'application/json; charset=utf-8')
  if (response.etag !== null) res.setHeader('ETag', response.etag)
  res.setHeader(REPLAYED_HEADER, 'true')
  res.end(response.body)
}

/** Records the answer (or releases the claim) before the answer leaves. */
function recordAnswer (req: Request, res: Response, store: Store, id: IdempotencyId): void {
  const end = res.end.bind(res) as (...args: unknown[]) => Response
  res.end = ((...args: unknown[]) => {
    const [chunk] = args
    const status = res.statusCode
    const etag = res.getHeader('ETag')
    const body = Buffer.isBuffer(chunk) ? chunk.toString('utf8') : typeof chunk === 'string' ? chunk : ''
    const response = isKeptStatus(status) ? { status, body, etag: typeof etag === 'string' ? etag : null } : null
    store.finishIdempotencyKey(id, response)
      .catch((error: unknown) => { req.log.error({ err: error }, 'could not record the answer to an Idempotency-Key') })
      .finally(() => end(...args))
    return res
  }) as Response['end']
}

/**
 * Seconds until `retryAt` (when the user's oldest record stops counting): at least 1, at most
 * the longest a record counts (the TTL and one usage bucket).
 */
export function retryAfterSeconds (retryAt: string, now: number, ttlMs: number): number {
  return Math.min(Math.max(1, Math.ceil((Date.parse(retryAt) - now) / 1000)), Math.ceil((ttlMs + usageBucketMs(ttlMs)) / 1000))
}

/**
 * The middleware, for every content write; after access and body parsing, before the write.
 * `maxPerUser` is MAX_IDEMPOTENCY_KEYS_PER_USER.
 */
export function idempotency (store: Store, ttlMs: number, maxPerUser: number, now: Clock = systemClock): RequestHandler {
  let lastSweep = 0
  return async (req, res, next) => {
    const key = req.headers['idempotency-key']
    if (key === undefined) { next(); return }
    if (typeof key !== 'string' || !VALID_KEY.test(key)) throw new ContentdError('INVALID_IDEMPOTENCY_KEY')
    // [rules, issue 31] An app user's keys are its own, counted against the project's owner.
    const { app } = context(res)
    let caller: string
    let userId: string
    if (app) {
      caller = `app:${app.sub}`
      userId = projectOf(res).ownerId
    } else {
      const identity = identityOf(res)
      caller = identity.key ? `key:${identity.key.id}` : `user:${identity.user.id}`
      userId = identity.user.id
    }
    const id: IdempotencyId = { projectId: projectOf(res).id, caller, key }
    // The route, not the URL: the project is in `id` already, however its name was spelt.
    const fingerprint = requestFingerprint(req.method, (req.route as { path?: string } | undefined)?.path ?? req.path, req.body)
    const time = now()
    if (time - lastSweep > SWEEP_INTERVAL_MS) {
      lastSweep = time
      store.deleteExpiredIdempotencyKeys(new Date(time).toISOString())
        .catch((error: unknown) => { req.log.warn({ err: error }, 'could not delete expired Idempotency-Key records') })
    }
    const found = await store.claimIdempotencyKey({
      ...id, fingerprint, now: new Date(time).toISOString(), expiresAt: new Date(time + ttlMs).toISOString(), userId, maxPerUser
    })
    if (found.state === 'full') {
      res.setHeader('Retry-After', String(retryAfterSeconds(found.retryAt, time, ttlMs)))
      throw new ContentdError('RATE_LIMITED', `this user already holds ${maxPerUser} Idempotency-Key records (MAX_IDEMPOTENCY_KEYS_PER_USER); a new key is accepted once the oldest expires`)
    }
    if (found.state !== 'claimed') {
      if (found.fingerprint !== fingerprint) throw new ContentdError('IDEMPOTENCY_KEY_REUSED')
      if (found.state === 'running') throw new ContentdError('IDEMPOTENCY_IN_PROGRESS')
      replay(res, found.response)
      return
    }
    // No live answer: the change log may still know the key (docs/design.md §19), so a retry
    // after IDEMPOTENCY_TTL is not applied twice. The claim, held meanwhile, keeps a second
    // retry out until this one is answered.
    const logged = await store.findLoggedIdempotency(id).catch(async (error: unknown) => {
      await store.finishIdempotencyKey(id, null)
      throw error
    })
    if (logged) {
      if (logged.fingerprint !== fingerprint) {
        await store.finishIdempotencyKey(id, null)
        throw new ContentdError('IDEMPOTENCY_KEY_REUSED')
      }
      const response = loggedAnswer(logged)
      // Kept again for IDEMPOTENCY_TTL: further retries are answered without the log.
      await store.finishIdempotencyKey(id, response)
      replay(res, response)
      return
    }
    context(res).idempotency = { caller: id.caller, key, fingerprint }
    recordAnswer(req, res, store, id)
    next()
  }
}
