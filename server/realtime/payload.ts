// Every event payload is strict (docs/design.md §13): a member its event does not name is
// refused with INVALID_BODY naming it, as in every HTTP body. Only objects are checked here;
// a payload that is not an object at all is refused by its handler, with the shape it needs.
import { EVENT_MEMBERS, type ClientEvent } from '../../shared/events.js'
import { ContentdError } from '../../shared/errors.js'
import { isPlainObject } from '../../shared/json.js'
import { unknownFieldsMessage } from '../../shared/schemas.js'

/** INVALID_BODY naming the members of `payload` that `event` does not know; null when there are none. */
export function unknownMembersError (event: ClientEvent, payload: unknown): ContentdError | null {
  if (!isPlainObject(payload)) return null
  const known: readonly string[] = EVENT_MEMBERS[event]
  const unknown = Object.keys(payload).filter(member => !known.includes(member))
  return unknown.length > 0 ? new ContentdError('INVALID_BODY', unknownFieldsMessage(unknown)) : null
}
