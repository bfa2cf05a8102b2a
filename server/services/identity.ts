// Step one of "load identity, then enforce it": turn an Authorization header (or a Socket.IO
// handshake token) into the user behind it, or say why not. Enforcement is elsewhere.
import type { ErrorCode } from '../../shared/errors.js'
import { hashSecret, tokenKind } from '../auth/tokens.js'
import type { Clock } from '../clock.js'
import type { ApiKeyRecord, SessionRecord, Store, UserRecord } from '../store/types.js'

export interface Identity {
  user: UserRecord
  /** Set when the caller used a session token. */
  session: SessionRecord | null
  /** Set when the caller used an API key. */
  key: ApiKeyRecord | null
  /** SHA-256 of the presented secret: a stable, non-secret handle for rate limits and logs. */
  credentialHash: string
  /**
   * [rules, issue 31] Set for an app user's live stream (docs/design.md §17): `user` is then a
   * stand-in counted apart from every account, and no session, key or membership backs it.
   */
  app?: { sub: string }
}

export type IdentityResult = { identity: Identity, failure: null } | { identity: null, failure: ErrorCode }

const BEARER = /^Bearer[ ]+([\x21-\x7e]+)[ ]*$/i

/** The secret of an `Authorization: Bearer …` header; null when absent or malformed. */
export function bearerSecret (header: string | undefined): string | null {
  if (!header) return null
  return BEARER.exec(header)?.[1] ?? null
}

/** Who presents the secret, by the services' store and clock (HTTP requests and sockets alike). */
export class Identities {
  constructor (private readonly store: Store, private readonly now: Clock) {}

  resolve (secret: string | null): Promise<IdentityResult> {
    return resolveSecret(this.store, secret, this.now())
  }
}

export async function resolveSecret (store: Store, secret: string | null, now: number): Promise<IdentityResult> {
  if (secret === null) return { identity: null, failure: 'AUTH_REQUIRED' }
  const kind = tokenKind(secret)
  if (kind === null) return { identity: null, failure: 'INVALID_TOKEN' }
  const credentialHash = hashSecret(secret)
  if (kind === 'session') {
    const session = await store.findSession(credentialHash)
    if (!session || Date.parse(session.expiresAt) <= now) return { identity: null, failure: 'INVALID_TOKEN' }
    const user = await store.findUserById(session.userId)
    return user ? { identity: { user, session, key: null, credentialHash }, failure: null } : { identity: null, failure: 'INVALID_TOKEN' }
  }
  const key = await store.findApiKeyByHash(credentialHash)
  if (!key || (key.expiresAt !== null && Date.parse(key.expiresAt) <= now)) return { identity: null, failure: 'INVALID_TOKEN' }
  const user = await store.findUserById(key.userId)
  return user ? { identity: { user, session: null, key, credentialHash }, failure: null } : { identity: null, failure: 'INVALID_TOKEN' }
}

export function displayName (username: string): string {
  return `@${username}`
}
