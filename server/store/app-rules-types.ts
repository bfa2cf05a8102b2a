// What a store keeps for app users and rules (docs/design.md §17): per project, at most one
// rules document and at most one trust setting for the app's sign-in. Both are read by the
// rules service (server/services/app-rules.ts), which caches their compiled forms by revision.
import type { JsonObject } from '../../shared/json.js'

/** A project's rules document, as PUT (its compiled form is made from `document`). */
export interface RulesRecord {
  /** New for every document set; compiled rules are cached by it. */
  revision: string
  /** `{ "rules": { … } }` exactly as set. */
  document: JsonObject
  /** Who set it: "@alice". */
  setBy: string
  setAt: string
}

/** Which app sign-in a project trusts: exactly one of `jwks`, `jwksUrl`, `secretCiphertext`. */
export interface AppAuthRecord {
  revision: string
  issuer: string
  audience: string | null
  jwks: JsonObject | null
  jwksUrl: string | null
  /** The HS256 secret, encrypted (server/webhooks/secret-box.ts, bound to the project id). */
  secretCiphertext: string | null
  setBy: string
  setAt: string
}

/** Each store's rules and trust settings, one row or document per project. */
export interface AppRulesStore {
  getRules (projectId: string): Promise<RulesRecord | null>
  /** Stores (replacing) the project's rules; PROJECT_NOT_FOUND when the project is gone. */
  putRules (projectId: string, record: RulesRecord): Promise<void>
  /** false when it had none. */
  deleteRules (projectId: string): Promise<boolean>
  getAppAuth (projectId: string): Promise<AppAuthRecord | null>
  /** Stores (replacing) the project's trust setting; PROJECT_NOT_FOUND when the project is gone. */
  putAppAuth (projectId: string, record: AppAuthRecord): Promise<void>
  /** false when it had none. */
  deleteAppAuth (projectId: string): Promise<boolean>
}
