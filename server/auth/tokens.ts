// Secrets handed to clients: session tokens and API keys. Both are a recognisable prefix
// plus 256 random bits; only their SHA-256 is stored, and lookups go by that hash, so no
// secret comparison happens in our code at all (the approach of Unkey and GitHub tokens).
import { hash, randomBytes } from 'node:crypto'

export const SESSION_PREFIX = 'cds_'
export const API_KEY_PREFIX = 'cdk_'
/** How much of an API key is kept and shown so people can tell keys apart. */
export const VISIBLE_KEY_CHARS = 12

export type TokenKind = 'session' | 'key'

export function newSecret (kind: TokenKind): string {
  return (kind === 'session' ? SESSION_PREFIX : API_KEY_PREFIX) + randomBytes(32).toString('base64url')
}

/** One-shot crypto.hash: every authenticated request hashes its credential, and it costs a third of createHash's chain. */
export function hashSecret (secret: string): string {
  return hash('sha256', secret, 'hex')
}

/** Which kind a presented credential claims to be, from its prefix; null when neither. */
export function tokenKind (secret: string): TokenKind | null {
  if (secret.startsWith(SESSION_PREFIX)) return 'session'
  if (secret.startsWith(API_KEY_PREFIX)) return 'key'
  return null
}

export function newId (prefix: string): string {
  return prefix + randomBytes(12).toString('base64url')
}
