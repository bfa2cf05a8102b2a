// The local copy of docs/design.md §19, pure: the server's content at its version plus the
// pending writes, applied in the order they were made with the server's own operation code
// (shared/compound.ts). Computed again from the server's state on every change that comes in
// (a rebase), so a pending write always applies to the newest content known. A pending
// write that does not apply locally (its path is gone now) is left out of the view and kept
// in the outbox: the server decides, and a refusal is reported then.
import type { ContentOperation } from '../../compound.js'
import { applyContentOperation } from '../../compound.js'
import { operationOfChange } from '../../events.js'
import type { Json, JsonObject } from '../../json.js'
import type { QueuedWrite } from './outbox.js'

/** What a queued write does to the local copy; null when it cannot be known locally (a revert needs the history). */
export function localOperationOf (write: Pick<QueuedWrite, 'method' | 'suffix' | 'body'>): ContentOperation | null {
  // The write's body stays as queued: what is applied is a copy of it.
  const body = structuredClone(write.body) as Record<string, Json> | Json[]
  if (write.method === 'PATCH') return operationOfChange({ op: 'patch', operations: body as never })
  const name = write.suffix.replace(/^\//, '')
  if (name === '') return operationOfChange({ op: 'update', value: body as JsonObject })
  if (name === 'revert' || Array.isArray(body)) return null
  if (name === 'batch') {
    // Requests may leave out an amount of 1; change entries, which operationOfChange reads, never do.
    const operations = (body.operations as Array<Record<string, Json>>).map(o => (o.op === 'increment' || o.op === 'decrement') && o.value === undefined ? { ...o, value: 1 } : o)
    return operationOfChange({ op: 'batch', operations: operations as never })
  }
  const amount = name === 'increment' || name === 'decrement' ? body.value ?? 1 : body.value
  return operationOfChange({ op: name as 'set', path: String(body.path), value: amount as Json, ...(typeof body.index === 'number' ? { index: body.index } : {}) })
}

/** The server's content with the pending writes on top; `skipped` are those that did not apply here. */
export function rebase (server: JsonObject, pending: readonly QueuedWrite[]): { content: JsonObject, skipped: QueuedWrite[] } {
  let content = structuredClone(server)
  const skipped: QueuedWrite[] = []
  for (const write of pending) {
    let operation: ContentOperation | null
    try {
      operation = localOperationOf(write)
    } catch {
      operation = null
    }
    if (!operation) { skipped.push(write); continue }
    // Every operation throws without side effects (shared/operations.ts, compound.ts): the
    // one copy above is all the rebase needs.
    try {
      content = applyContentOperation(content, operation)
    } catch {
      skipped.push(write)
    }
  }
  return { content, skipped }
}
