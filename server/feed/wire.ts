// The one wire form of a change: its log entry as JSON text (`project` first, docs/design.md §9),
// made at most once per change however many consumers send it. Socket.IO rooms, Server-Sent
// Events streams, webhooks and the Redis relay all send exactly these characters, so the
// value is serialized once per write (issue 35): for a local commit the text is put together
// from the value's JSON the write already made (no JSON.stringify of the value at all); for a
// change from another node it is the text that came over Redis.
//
// Kept beside the entry object in a WeakMap, so the text lives exactly as long as some
// consumer still holds the change.
import type { ChangeEntry } from '../../shared/events.js'

type Source = string | (() => string)

const texts = new WeakMap<ChangeEntry, Source>()

/** Says how to make the change's JSON text when it is first needed (or the text itself). */
export function rememberWire (change: ChangeEntry, source: Source): void {
  texts.set(change, source)
}

/** The change as JSON text, the same characters as JSON.stringify(change), made once. */
export function wireOf (change: ChangeEntry): string {
  const known = texts.get(change)
  if (typeof known === 'string') return known
  // A change nobody registered (a test's hand-made entry): serialized here, once.
  const json = known ? known() : JSON.stringify(change)
  texts.set(change, json)
  return json
}
