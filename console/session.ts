// The signed-in user: a session token kept in sessionStorage (gone when the tab closes, kept
// across reloads), and one SDK client made with it. The console reaches the server only
// through that client (contentd/client).
import { createClient, ContentdError, type ContentdClient, type SessionGrant } from '../shared/client/index.js'

const STORAGE_KEY = 'contentd.session'

export interface Session {
  token: string
  /** "@alice" */
  username: string
  client: ContentdClient
}

/** A client without a token: signs up and logs in. */
export function anonymousClient (): ContentdClient {
  return createClient({ baseUrl: location.origin })
}

export function openSession (grant: Pick<SessionGrant, 'token' | 'username'>): Session {
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify({ token: grant.token, username: grant.username }))
  return { token: grant.token, username: grant.username, client: createClient({ baseUrl: location.origin, token: grant.token }) }
}

export function restoreSession (): Session | null {
  try {
    const saved = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null') as { token?: unknown, username?: unknown } | null
    if (saved && typeof saved.token === 'string' && typeof saved.username === 'string') return openSession({ token: saved.token, username: saved.username })
  } catch { /* a damaged entry is the same as none */ }
  return null
}

export function forgetSession (session: Session | null): void {
  sessionStorage.removeItem(STORAGE_KEY)
  session?.client.close()
}

/** The session token no longer works: the user must sign in again. */
export function isSessionEnded (error: unknown): boolean {
  return error instanceof ContentdError && (error.code === 'INVALID_TOKEN' || error.code === 'AUTH_REQUIRED')
}

/** A sentence for people from any failure. */
export function messageOf (error: unknown): string {
  if (error instanceof ContentdError) {
    if (error.code === 'NETWORK_ERROR') return 'Cannot reach the server. Check your connection and try again.'
    return error.message
  }
  return error instanceof Error ? error.message : String(error)
}
