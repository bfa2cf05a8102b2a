// Where the SDK's credential comes from (docs/design.md §17): a fixed token or key, or a
// function that returns an app user's JWT (from the app's own sign-in). A function is called
// for the first request, then again shortly before the token it gave expires (its `exp`), so
// a long-lived page never sends an expired token; a 401 INVALID_TOKEN also asks it again once.

/** A session token, an API key, or a function giving an app user's token (maybe async). */
export type TokenOption = string | (() => string | Promise<string>)

/** Ask for a new token this long before the current one's `exp`. */
export const REFRESH_BEFORE_MS = 30_000

export class TokenSource {
  private current: string | undefined
  private expiresAt: number | null = null
  private pending: Promise<string> | null = null

  constructor (private readonly option: TokenOption | undefined, private readonly now: () => number = () => Date.now()) {
    if (typeof option === 'string') this.current = option
  }

  /** True when the credential comes from a function (it can be asked again). */
  get refreshable (): boolean {
    return typeof this.option === 'function'
  }

  /** The credential to send now; undefined without one. */
  async get (): Promise<string | undefined> {
    if (typeof this.option !== 'function') return this.current
    if (this.current !== undefined && (this.expiresAt === null || this.now() < this.expiresAt - REFRESH_BEFORE_MS)) return this.current
    return this.refresh()
  }

  /** Asks the function again (one call at a time, however many requests wait). */
  refresh (): Promise<string> {
    const provider = this.option
    if (typeof provider !== 'function') return Promise.resolve(this.current ?? '')
    this.pending ??= Promise.resolve(provider()).then(token => {
      this.current = token
      this.expiresAt = expiryOf(token)
      return token
    }).finally(() => { this.pending = null })
    return this.pending
  }
}

/** A JWT's `exp` in milliseconds, null when it is not a JWT or has none (never verified here: the server does). */
export function expiryOf (token: string): number | null {
  const payload = token.split('.')[1]
  if (token.split('.').length !== 3 || payload === undefined) return null
  try {
    const base64 = payload.replace(/-/g, '+').replace(/_/g, '/')
    const json = typeof atob === 'function' ? atob(base64) : ''
    const exp = (JSON.parse(json) as { exp?: unknown }).exp
    return typeof exp === 'number' ? exp * 1000 : null
  } catch {
    return null
  }
}
