// The realtime protocol's payloads (docs/design.md §7) and the change log's entries (§9),
// shared by the server, the dashboard and any client. A client replays `change` events (log
// entries) over its subscribe snapshot with the very same applyOperation the server uses,
// so both always agree on the content.
import type { ErrorBody } from './errors.js'
import { batchOperationOf, type BatchOperationBody } from './batch.js'
import type { ContentOperation } from './compound.js'
import type { Json, JsonObject } from './json.js'
import type { PatchOperation } from './json-patch.js'
import { parsePath } from './path.js'
import type { OperationName } from './operations.js'

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

/**
 * The members each event a client sends may have. Any other member is refused with
 * INVALID_BODY naming it, as in every HTTP body (docs/design.md §13): a server that does not
 * know a member never acts as if it had not been sent (an old server would otherwise answer
 * a newer client's `subscribe { project, path }` with the whole document).
 */
export const EVENT_MEMBERS = {
  [EVENTS.subscribe]: ['project', 'since'],
  [EVENTS.unsubscribe]: ['project'],
  [EVENTS.presenceSet]: ['project', 'state'],
  [EVENTS.presenceList]: ['project'],
  [EVENTS.presenceLeave]: ['project']
} as const satisfies Record<string, readonly string[]>

/** The events a client sends. */
export type ClientEvent = keyof typeof EVENT_MEMBERS

/** `emit('subscribe', { project: '@alice/demo' }, ack)`; `unsubscribe` takes the same. */
export interface SubscribeRequest {
  project: string
  /**
   * Resume (docs/design.md §9): the version the client has. The ack then carries the changes
   * after it instead of the content, or HISTORY_EXPIRED when the log no longer has them.
   */
  since?: number
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
 * to the same user, on any of their connections, are limited (by bytes): past that,
 * RATE_LIMITED with `retryAfter`, and the subscription already in place stays.
 */
export type SubscribeAck =
  /** `project` is the canonical reference (lower-case owner) that `change` events carry. */
  | { ok: true, project: string, version: number, content: JsonObject }
  /**
   * With `since`: the changes after it, ascending, up to `version`; live `change` events
   * follow from `version` + 1. `more: true` (docs/design.md §13b): the ack holds one page of
   * the log (CHANGES_PAGE_BYTES) and is not a subscription: subscribe again with `since` =
   * `version` for the rest.
   */
  | { ok: true, project: string, version: number, changes: ChangeEntry[], more?: true }
  | EventFailure

export type UnsubscribeAck = { ok: true } | EventFailure

/**
 * Who made a change (docs/design.md §9): a user through a session, an API key (its id and
 * name, never its secret), or the operator outside the API (the CLI's content import is
 * `{ type: "system", name: "cli" }`).
 */
export type Actor =
  | { type: 'user', name: string }
  | { type: 'key', id: string, name: string }
  | { type: 'system', name: string }
  // An app user (docs/design.md §17), by its token's `sub`.
  | { type: 'app', sub: string }

/** The operations a change log entry can record: the content operations, revert, batch and patch. */
export type ChangeOp = OperationName | 'revert' | 'batch' | 'patch'

/**
 * One committed change, as the change log keeps it and every channel sends it (HTTP
 * `…/content/changes`, the Socket.IO `change` event): docs/design.md §9. `version` is the
 * project's version right after it.
 */
export interface ChangeEntry {
  project: string
  version: number
  op: ChangeOp
  /** Dot path; absent for update and revert. */
  path?: string
  /**
   * increment/decrement: the amount; set/push/insert: the value; update: the new content;
   * revert: the content it restored. Absent for delete.
   */
  value?: Json
  /** insert only. */
  index?: number
  /**
   * batch: its operations with dot paths (`{op, path, value?, index?}`); patch: the RFC 6902
   * operations as applied (docs/design.md §10).
   */
  operations?: Json[]
  /** revert only: the version whose content was restored. */
  revertedTo?: number
  /** ISO time of the commit. */
  at: string
  actor: Actor
}

/** The realtime `change` event is the change log's entry. */
export type ChangeEvent = ChangeEntry

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

/** The operation a change entry describes, ready for applyOperation. Throws on a malformed entry. */
export function operationOfChange (change: Pick<ChangeEntry, 'op' | 'path' | 'value' | 'index' | 'operations'>): ContentOperation {
  switch (change.op) {
    case 'batch':
      return { op: 'batch', operations: (change.operations as unknown as BatchOperationBody[]).map(batchOperationOf) }
    case 'patch':
      return { op: 'patch', operations: change.operations as unknown as PatchOperation[] }
    // A revert's value is the whole content it restored: applied, it replaces the content.
    case 'update':
    case 'revert':
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
