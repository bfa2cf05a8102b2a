// Webhooks (docs/design.md §11), the parts free of HTTP and storage: the request body, which
// change entries a webhook's filters let through, and the retry schedule. The server's
// dispatcher and management service use them, and so can a client.
import { z } from 'zod'
import type { ChangeEntry } from './events.js'
import { OPERATION_NAMES } from './operations.js'
import { pointerSegments } from './json-patch.js'
import { dotSegments, isAtOrBelow, parsePath } from './path.js'

/** A receiver has this long to answer 2xx; later counts as a failure (and is retried). */
export const DELIVERY_TIMEOUT_MS = 10_000
/** The first retry waits about this long; each further one twice as long... */
export const FIRST_RETRY_MS = 1000
/** ...up to this. */
export const MAX_RETRY_MS = 60 * 60 * 1000
/** A webhook failing for this long without one success is disabled. */
export const DISABLE_AFTER_MS = 3 * 24 * 60 * 60 * 1000
/** The deliveries list keeps this many attempts per webhook, newest first. */
export const DELIVERIES_KEPT = 100

/**
 * The op names a filter may list: the content operations, revert, and the multi-operation
 * entries (batch, patch) of docs/design.md §10.
 */
export const WEBHOOK_OPS = [...OPERATION_NAMES, 'revert', 'batch', 'patch'] as const
export type WebhookOp = typeof WEBHOOK_OPS[number]

const MAX_URL_LENGTH = 2048
const MAX_FILTERS = 50

const webhookUrl = z.string({ error: 'url is required and must be a string' })
  .max(MAX_URL_LENGTH, { error: `url must be at most ${MAX_URL_LENGTH} characters` })
  .refine(text => {
    try {
      const url = new URL(text)
      return (url.protocol === 'https:' || url.protocol === 'http:') && url.username === '' && url.password === ''
    } catch {
      return false
    }
  }, { error: 'url must be an absolute http(s) URL without credentials' })

// A path filter is a dot path (docs/design.md §2); kept in its dot form. "" is the root.
const pathFilter = z.string({ error: 'paths must be dot paths' }).refine(path => {
  try { parsePath(path); return true } catch { return false }
}, { error: 'paths must be valid dot paths' })

export const webhookBody = z.strictObject({
  url: webhookUrl,
  paths: z.array(pathFilter, { error: 'paths must be an array of dot paths' }).min(1, { error: 'paths, when given, lists at least one path' }).max(MAX_FILTERS).optional(),
  ops: z.array(z.enum(WEBHOOK_OPS, { error: `ops must list operation names (${WEBHOOK_OPS.join(', ')})` }), { error: 'ops must be an array of operation names' })
    .min(1, { error: 'ops, when given, lists at least one operation' }).optional(),
  description: z.string({ error: 'description must be a string' }).max(500, { error: 'description must be at most 500 characters' }).optional()
})
export type WebhookRequest = z.output<typeof webhookBody>

// What the API shows of webhooks (the created one with its secret, once; deliveries) are the
// shapes of shared/api/webhooks.ts.
export type { CreatedWebhook, DeliveryView, WebhookView } from './api/webhooks.js'

/** The body of `POST …/webhooks/:id/test`. */
export interface PingPayload {
  type: 'ping'
  webhook: string
  project: string
  at: string
}

/** An entry without a path (update, revert) is at or below every filter. */
const pathMatches = (path: string | undefined, prefix: string): boolean => path === undefined || isAtOrBelow(dotSegments(path), prefix)

/** The parts of an entry a filter looks at; batch and patch entries carry `operations`. */
type Filterable = Pick<ChangeEntry, 'op' | 'path'> & { operations?: readonly unknown[] }

/** A batch's operation (dot path) or a patch's (JSON Pointer path, and `from` for move and copy). */
type InnerOperation = { op: string, path?: unknown, from?: unknown }

function isInnerOperation (o: unknown): o is InnerOperation {
  return typeof o === 'object' && o !== null && typeof (o as { op?: unknown }).op === 'string'
}

function operationMatches (op: string, path: string | undefined, paths: readonly string[] | null, ops: readonly string[] | null): boolean {
  return (ops === null || ops.includes(op)) && (paths === null || paths.some(prefix => pathMatches(path, prefix)))
}

/**
 * Whether a webhook with these filters receives the entry (docs/design.md §11): its path at
 * or below one of `paths` and its op in `ops` (null: no filter). update and revert replace
 * the whole content, so they match every filter; a batch or patch matches when any of its
 * operations does.
 */
export function webhookMatches (entry: Filterable, paths: readonly string[] | null, ops: readonly string[] | null): boolean {
  if (entry.op === 'update' || entry.op === 'revert') return true
  if (entry.operations !== undefined) {
    // Listing "batch" (or "patch") in ops takes every one of them whose paths match.
    const listed = ops === null || ops.includes(entry.op)
    const innerOps = listed ? null : ops
    return entry.operations.filter(isInnerOperation).some(o => o.op === 'update' ||
      operationMatches(o.op, pathText(o.path), paths, innerOps) ||
      (o.from !== undefined && operationMatches(o.op, pathText(o.from), paths, innerOps)))
  }
  return operationMatches(entry.op, entry.path, paths, ops)
}

/** An operation inside a batch may carry its path as a dot string or as segments. */
function pathText (path: unknown): string | undefined {
  // A patch's JSON Pointer ("/a/b"): the dot path of the same place.
  if (typeof path === 'string' && path.startsWith('/')) return pointerSegments(path).join('.')
  if (typeof path === 'string') return path
  if (Array.isArray(path)) return path.join('.')
  return undefined
}

/** How long to wait after the `failures`-th consecutive failure: 1 s, 2 s, 4 s... at most 1 h. */
export function retryDelayMs (failures: number): number {
  const exponent = Math.max(0, Math.min(failures - 1, 32))
  return Math.min(FIRST_RETRY_MS * 2 ** exponent, MAX_RETRY_MS)
}
