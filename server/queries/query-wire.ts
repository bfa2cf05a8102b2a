// The one place a live query's `query` event is serialized (docs/design.md §16), for both
// transports. The hub hands the same QueryEvent to every subscriber of a result; its items
// (the whole key list and the new or changed values: the costly part) are serialized once
// for all of them, however many there are. What differs per subscriber is small: on
// Socket.IO, `prev` (and the project and path the payload names), so each distinct
// (project, path, prev) is put together once and shared — most subscribers of a result heard
// the same previous event; on SSE, nothing (`{version, items}`).
//
// A change that does not alter a result makes no QueryEvent at all (live-result.ts), so it
// reaches none of this: nothing is serialized for that query.
import type { QueryEvent } from './query-hub.js'

interface Encoded {
  items: string
  /** Socket.IO payloads by `${prev}\n${project}\n${path}`. */
  payloads: Map<string, string>
}

// Keyed by the event object the hub shares among the result's subscribers: dropped with it.
const encodings = new WeakMap<QueryEvent, Encoded>()

function encodedOf (event: QueryEvent): Encoded {
  let encoded = encodings.get(event)
  if (!encoded) {
    encoded = { items: JSON.stringify(event.items), payloads: new Map() }
    encodings.set(event, encoded)
  }
  return encoded
}

/**
 * The Socket.IO `query` payload's JSON: `{project, subscription, version, prev, items}`, the
 * text JSON.stringify makes of that object, built once per distinct prev of one event.
 */
export function socketQueryPayload (event: QueryEvent, project: string, path: string, prev: number): string {
  const encoded = encodedOf(event)
  const id = `${prev}\n${project}\n${path}`
  let payload = encoded.payloads.get(id)
  if (payload === undefined) {
    payload = `{"project":${JSON.stringify(project)},"subscription":${JSON.stringify(path)},"version":${event.version},"prev":${prev},"items":${encoded.items}}`
    encoded.payloads.set(id, payload)
  }
  return payload
}

/** The SSE `query` event's data: `{version, items}`. */
export function sseQueryData (event: QueryEvent): string {
  return `{"version":${event.version},"items":${encodedOf(event).items}}`
}
