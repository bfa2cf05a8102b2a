// The realtime protocol's payloads (docs/design.md §7), shared by the server, the dashboard and
// any client. A client replays `change` events over its subscribe snapshot with the very
// same applyOperation the server uses, so both always agree on the content.
import type { ErrorBody } from './errors.js'
import type { Json, JsonObject } from './json.js'
import { formatPath, parsePath } from './path.js'
import type { Operation, OperationName } from './operations.js'

/** Event names, so no side spells them differently. */
export const EVENTS = {
  subscribe: 'subscribe',
  unsubscribe: 'unsubscribe',
  change: 'change',
  revoked: 'revoked',
  shutdown: 'shutdown',
  // Presence (docs/design.md §14; payloads in shared/presence.ts).
  presence: 'presence',
  presenceSet: 'presence:set',
  presenceList: 'presence:list',
  presenceLeave: 'presence:leave'
} as const

/** `emit('subscribe', { project: '@alice/demo' }, ack)`; `unsubscribe` takes the same. */
export interface SubscribeRequest {
  project: string
}

/**
 * Every refused event: the HTTP API's {message, code}, and with RATE_LIMITED `retryAfter`,
 * the seconds to wait (what HTTP says in Retry-After). Events with a missing or malformed
 * payload get INVALID_BODY; events the server does not know, UNKNOWN_EVENT.
 */
export type EventFailure = { ok: false } & ErrorBody & { retryAfter?: number }

/**
 * Subscribing again to a project the connection is subscribed to takes a new snapshot; a
 * subscribe sent while another for the same project is still being answered shares its
 * answer. Within SOCKET_RESUBSCRIBE_WINDOW of a snapshot, more snapshots of the same project
 * to the same connection are limited (by bytes): past that, RATE_LIMITED with `retryAfter`,
 * and the subscription already in place stays.
 */
export type SubscribeAck =
  /** `project` is the canonical reference (lower-case owner) that `change` events carry. */
  | { ok: true, project: string, version: number, content: JsonObject }
  | EventFailure

export type UnsubscribeAck = { ok: true } | EventFailure

/** One committed change; `version` is the project's version right after it. */
export interface ChangeEvent {
  project: string
  version: number
  op: OperationName
  /** Dot path; absent for update. */
  path?: string
  /** increment/decrement: the amount; set/push/insert: the value; update: the new content. */
  value?: Json
  /** insert only. */
  index?: number
  /** ISO time of the commit. */
  at: string
}

/**
 * Access ended. With `project`, only that subscription ended (member removed, project
 * deleted) and the connection stays; without it, the credential itself was revoked (key
 * revoked, logout, expiry) and the server disconnects right after.
 */
export interface RevokedEvent extends ErrorBody {
  project?: string
}

/**
 * This node is shutting down (SIGTERM): sent to every socket on it right before the server
 * closes the connection. The close itself is at the transport level ('transport close';
 * 'transport error' for a client still long-polling), never 'io server disconnect', so
 * clients reconnect by themselves, behind a load balancer to another node. Code
 * STORE_UNAVAILABLE (503), the code a request to a node that is going away would get.
 */
export type ShutdownEvent = ErrorBody

/** `connect_error`'s `data` when the handshake is refused (`retryAfter` with RATE_LIMITED). */
export type ConnectErrorData = ErrorBody & { retryAfter?: number }

/** The event a committed operation is broadcast as. */
export function changeEventOf (project: string, version: number, operation: Operation, at: string): ChangeEvent {
  switch (operation.op) {
    case 'update':
      return { project, version, op: 'update', value: operation.value, at }
    case 'delete':
      return { project, version, op: 'delete', path: formatPath(operation.path), at }
    case 'insert':
      return { project, version, op: 'insert', path: formatPath(operation.path), value: operation.value, index: operation.index, at }
    default:
      return { project, version, op: operation.op, path: formatPath(operation.path), value: operation.value, at }
  }
}

/** The operation a change event describes, ready for applyOperation. Throws on a malformed event. */
export function operationOfChange (change: ChangeEvent): Operation {
  switch (change.op) {
    case 'update':
      return { op: 'update', value: change.value as JsonObject }
    case 'delete':
      return { op: 'delete', path: parsePath(change.path) }
    case 'insert':
      return { op: 'insert', path: parsePath(change.path), value: change.value as Json, index: change.index as number }
    case 'increment':
    case 'decrement':
      return { op: change.op, path: parsePath(change.path), value: change.value as number }
    default:
      return { op: change.op, path: parsePath(change.path), value: change.value as Json }
  }
}
