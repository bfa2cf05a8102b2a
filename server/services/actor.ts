// The public face of an identity (docs/design.md §9, §14): what other people may be shown
// about who is connected (presence) or who made a change (the change log records it). The
// key (its id and name) when the caller used one, else the user; built from names and ids
// only, never from a secret or its hash.
import type { Actor } from '../../shared/actor.js'
import { displayName, type Identity } from './identity.js'

export function actorOf (identity: Identity): Actor {
  return identity.key
    ? { type: 'key', id: identity.key.id, name: identity.key.name }
    : { type: 'user', name: displayName(identity.user.username) }
}
