// App users' tokens for tests (docs/design.md §17): real JWTs signed with jose, and the
// ones that must be refused (alg none, a bad signature).
import { SignJWT, type CryptoKey, type JWTPayload } from 'jose'

export const APP_ISSUER = 'https://app.example.test/'
export const APP_AUDIENCE = 'demo-app'
export const APP_SECRET = 'a-shared-hs256-secret-of-at-least-32-bytes!'

export interface SignOptions {
  secret?: string
  issuer?: string
  audience?: string | null
  /** Seconds from now; negative for the past. */
  expiresIn?: number
  notBeforeIn?: number
  sub?: string | null
}

/** An HS256 token for `claims` (sub added unless null). */
export async function hs256Token (claims: JWTPayload = {}, options: SignOptions = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  const jwt = new SignJWT({ ...claims, ...(options.sub === null ? {} : { sub: options.sub ?? String(claims.sub ?? 'u1') }) })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt(now)
    .setIssuer(options.issuer ?? APP_ISSUER)
    .setExpirationTime(now + (options.expiresIn ?? 3600))
  if (options.audience !== null) jwt.setAudience(options.audience ?? APP_AUDIENCE)
  if (options.notBeforeIn !== undefined) jwt.setNotBefore(now + options.notBeforeIn)
  return jwt.sign(new TextEncoder().encode(options.secret ?? APP_SECRET))
}

/** A token signed with an asymmetric key (RS256, ES256, EdDSA), `kid` in the header. */
export async function signedToken (alg: string, key: CryptoKey, kid: string, claims: JWTPayload = {}, audience: string = APP_AUDIENCE): Promise<string> {
  return new SignJWT({ sub: 'u1', ...claims }).setProtectedHeader({ alg, kid }).setIssuer(APP_ISSUER).setAudience(audience).setIssuedAt().setExpirationTime('1h').sign(key)
}

/** An unsigned token (`alg: none`) with valid-looking claims. */
export function unsignedToken (claims: JWTPayload = { sub: 'u1' }): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
  const now = Math.floor(Date.now() / 1000)
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ iss: APP_ISSUER, aud: APP_AUDIENCE, exp: now + 3600, ...claims })}.`
}

/**
 * The same token with its signature's first character changed: the first character carries
 * six whole bits of the signature (the last one may carry only padding bits, which a lenient
 * decoder ignores).
 */
export function tampered (token: string): string {
  const at = token.lastIndexOf('.') + 1
  const flip = token[at] === 'A' ? 'B' : 'A'
  return token.slice(0, at) + flip + token.slice(at + 1)
}
