// The Rules tab's form for the app sign-in a project trusts (docs/rules.md#trust-settings-auth):
// what the owner typed, read into the body of `PUT …/auth`. The server is the judge of keys,
// URLs and secrets (INVALID_AUTH_CONFIG, WEBHOOK_URL_FORBIDDEN); here only what cannot be sent
// at all is caught. Pure: test/console/rules-text.test.ts.
import type { AppAuth, AppAuthSettings } from '../../shared/client/index.js'
import { isJsonObject, parseJsonText } from '../json-text.js'

export type TrustKind = AppAuth['kind']

export interface TrustForm {
  issuer: string
  audience: string
  kind: TrustKind
  /** The HS256 secret (never shown back by the server: typed again to change the setting). */
  secret: string
  jwksUrl: string
  /** The inline JWK set as JSON text. */
  jwks: string
}

/** The form for a new setting, or filled from the current one (its secret is never known here). */
export function trustFormOf (auth: AppAuth | null): TrustForm {
  return {
    issuer: auth?.issuer ?? '',
    audience: auth?.audience ?? '',
    kind: auth?.kind ?? 'hs256Secret',
    secret: '',
    jwksUrl: auth?.jwksUrl ?? '',
    jwks: auth?.jwks ? JSON.stringify(auth.jwks, null, 2) : ''
  }
}

export type ReadTrust = { ok: true, settings: AppAuthSettings } | { ok: false, message: string }

export function readTrustForm (form: TrustForm): ReadTrust {
  const issuer = form.issuer.trim()
  if (issuer === '') return { ok: false, message: 'The issuer is the "iss" your app\'s tokens carry, e.g. https://myapp.example/.' }
  const audience = form.audience.trim()
  const base: AppAuthSettings = { issuer, ...(audience === '' ? {} : { audience }) }
  if (form.kind === 'hs256Secret') {
    if (form.secret === '') return { ok: false, message: 'Type the shared HS256 secret (at least 32 bytes); it is never shown again.' }
    return { ok: true, settings: { ...base, hs256Secret: form.secret } }
  }
  if (form.kind === 'jwksUrl') {
    const url = form.jwksUrl.trim()
    if (url === '') return { ok: false, message: 'Type the JWKS URL of your identity provider, e.g. https://myapp.example/.well-known/jwks.json.' }
    return { ok: true, settings: { ...base, jwksUrl: url } }
  }
  const parsed = parseJsonText(form.jwks)
  if (!parsed.ok) return { ok: false, message: `JWK set: ${parsed.message}` }
  const keys = isJsonObject(parsed.value) ? parsed.value.keys : undefined
  if (!Array.isArray(keys) || !keys.every(isJsonObject)) return { ok: false, message: 'A JWK set is {"keys": [ {…public key…} ]}.' }
  return { ok: true, settings: { ...base, jwks: { keys } } }
}
