// App users' tokens (docs/design.md §17): a JWT from the app's own sign-in, verified with jose
// against the project's trust setting — signature with RS256, ES256 or EdDSA (a JWK set,
// inline or by URL) or HS256 (a shared secret), never `none`; `iss`; `aud` when configured;
// `exp`/`nbf` with 60 s leeway; a string `sub`. Anything else is 401 INVALID_TOKEN.
//
// Verifying costs a signature check (and, for a JWKS URL, maybe a fetch), so a verified token
// is remembered per project and trust revision until it expires (APP_TOKEN_CACHE entries at
// most, oldest dropped first): an app user's increments cost about what an API key's do.
// JWKS URLs are fetched through jose's remote set (cached; refetched on an unknown `kid` at
// most once per 30 s; JWKS_TIMEOUT), each fetch checked by the webhooks' target policy, in the
// connection's own lookup (server/webhooks/guarded-request.ts).
import { createHash } from 'node:crypto'
import type { createLocalJWKSet, createRemoteJWKSet } from 'jose'

type KeySet = ReturnType<typeof createLocalJWKSet> | ReturnType<typeof createRemoteJWKSet>
import { ContentdError } from '../../shared/errors.js'
import type { JsonObject } from '../../shared/json.js'
import type { AppAuthRecord } from '../store/app-rules-types.js'
import { guardedFetch } from '../webhooks/guarded-request.js'
import { checkWebhookTarget, systemResolver, type Resolver } from '../webhooks/target-policy.js'
import { loadJose, type Jose } from './jose.js'

/** Leeway on exp and nbf (docs/design.md §17). */
export const CLOCK_LEEWAY_S = 60
const ASYMMETRIC = ['RS256', 'ES256', 'EdDSA']
/** An unknown kid refetches a JWKS URL at most this often. */
const REFETCH_COOLDOWN_MS = 30_000

/** A verified app user. */
export interface AppUser {
  sub: string
  /** The token's claims, the rules' `auth`. */
  claims: JsonObject
  /** When the token expires (ms since the epoch), null without `exp`. */
  expiresAt: number | null
}

export interface AppTokenOptions {
  cacheEntries: number
  jwksTimeoutMs: number
  allowPrivate: boolean
  /** Opens the stored HS256 secret (bound to the project id). */
  openSecret: (ciphertext: string, projectId: string) => string
  resolve?: Resolver
  now: () => number
}

/** A compact JWS: three base64url parts (what a contentd token or key never looks like). */
export function looksLikeJwt (secret: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(secret)
}

export class AppTokens {
  private readonly verified = new Map<string, AppUser>()
  private readonly remoteSets = new Map<string, KeySet>()

  constructor (private readonly options: AppTokenOptions) {}

  /** The app user behind `token` for the project trusting `auth`; INVALID_TOKEN otherwise. */
  async verify (projectId: string, auth: AppAuthRecord | null, token: string): Promise<AppUser> {
    if (!auth) throw new ContentdError('INVALID_TOKEN', 'this project trusts no app sign-in')
    const cacheKey = createHash('sha256').update(`${projectId}\n${auth.revision}\n${token}`).digest('base64url')
    const known = this.verified.get(cacheKey)
    const now = this.options.now()
    if (known && (known.expiresAt === null || now < known.expiresAt + CLOCK_LEEWAY_S * 1000)) return known
    if (known) this.verified.delete(cacheKey)
    const user = await this.verifyAfresh(projectId, auth, token)
    this.remember(cacheKey, user)
    return user
  }

  private async verifyAfresh (projectId: string, auth: AppAuthRecord, token: string): Promise<AppUser> {
    let payload: JsonObject
    const jose = await loadJose()
    try {
      const options = {
        issuer: auth.issuer,
        ...(auth.audience === null ? {} : { audience: auth.audience }),
        clockTolerance: CLOCK_LEEWAY_S,
        currentDate: new Date(this.options.now())
      }
      if (auth.secretCiphertext !== null) {
        const key = new TextEncoder().encode(this.options.openSecret(auth.secretCiphertext, projectId))
        payload = (await jose.jwtVerify(token, key, { ...options, algorithms: ['HS256'] })).payload as JsonObject
      } else {
        payload = (await jose.jwtVerify(token, this.keysOf(jose, auth), { ...options, algorithms: ASYMMETRIC })).payload as JsonObject
      }
    } catch (error) {
      if (error instanceof ContentdError) throw error
      throw new ContentdError('INVALID_TOKEN', `the app token does not verify (${error instanceof Error ? describe(error) : 'unknown reason'})`)
    }
    if (typeof payload.sub !== 'string' || payload.sub === '') throw new ContentdError('INVALID_TOKEN', 'the app token has no "sub"')
    return { sub: payload.sub, claims: payload, expiresAt: typeof payload.exp === 'number' ? payload.exp * 1000 : null }
  }

  private keysOf (jose: Jose, auth: AppAuthRecord): KeySet {
    if (auth.jwks !== null) return jose.createLocalJWKSet(auth.jwks as unknown as Parameters<typeof createLocalJWKSet>[0])
    const url = auth.jwksUrl as string
    let set = this.remoteSets.get(url)
    if (!set) {
      const { allowPrivate, resolve, jwksTimeoutMs } = this.options
      set = jose.createRemoteJWKSet(new URL(url), {
        timeoutDuration: jwksTimeoutMs,
        cooldownDuration: REFETCH_COOLDOWN_MS,
        [jose.customFetch]: async (target, init) => {
          // The target policy of webhooks (docs/design.md §11), checked at every fetch: a name
          // that resolved to a public address when the setting was saved may not since.
          // The check refuses schemes and literal addresses; the connection's own lookup checks
          // the address it connects to (a second resolution could answer differently).
          await checkWebhookTarget(target, allowPrivate, resolve)
          return guardedFetch(target, init, { resolve: resolve ?? systemResolver, allowPrivate, maxBytes: MAX_JWKS_BYTES })
        }
      })
      // One set per distinct URL, each holding at most MAX_JWKS_BYTES of keys; the oldest dropped.
      if (this.remoteSets.size >= REMOTE_SETS_KEPT) this.remoteSets.delete(this.remoteSets.keys().next().value as string)
      this.remoteSets.set(url, set)
    }
    return set
  }

  private remember (key: string, user: AppUser): void {
    if (this.options.cacheEntries === 0) return
    if (this.verified.size >= this.options.cacheEntries) this.verified.delete(this.verified.keys().next().value as string)
    this.verified.set(key, user)
  }
}

/** A key set's answer is read up to this many bytes; a larger one fails the fetch (docs/design.md §13b). */
const MAX_JWKS_BYTES = 256 * 1024
/** Remote key sets kept at once, whatever the token cache's size: each may hold MAX_JWKS_BYTES. */
const REMOTE_SETS_KEPT = 100

/** jose's reason in a few words (never the token). */
function describe (error: Error): string {
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' ? `${code}: ${error.message}` : error.message
}
