// App users and rules (docs/design.md §17): the bodies of `…/auth`, `…/rules/check` and their
// answers, as zod schemas shared by the server (validation) and clients (types). A rules
// document itself is checked by the server's compiler (server/rules/document.ts), which
// names the rule at fault; here it is only "a JSON object".
import { z } from 'zod'

/** `PUT …/auth`: the issuer, an optional audience, and exactly one way to check signatures. */
export const appAuthBody = z.object({
  issuer: z.string().min(1).max(2048),
  audience: z.string().min(1).max(2048).optional(),
  jwks: z.object({ keys: z.array(z.record(z.string(), z.unknown())).min(1).max(100) }).optional(),
  jwksUrl: z.string().max(2048).optional(),
  hs256Secret: z.string().max(4096).optional()
}).strict()

export type AppAuthBody = z.infer<typeof appAuthBody>

/** `GET`/`PUT …/auth`'s answer: never the secret. */
export const appAuthView = z.object({
  issuer: z.string(),
  audience: z.string().nullable(),
  kind: z.enum(['jwks', 'jwksUrl', 'hs256Secret']),
  jwks: z.object({ keys: z.array(z.record(z.string(), z.unknown())) }).optional(),
  jwksUrl: z.string().optional(),
  setBy: z.string(),
  setAt: z.string()
})

export type AppAuthView = z.infer<typeof appAuthView>

/** `POST …/rules/check`: who (the claims, or null), what, where. */
export const rulesCheckBody = z.object({
  auth: z.record(z.string(), z.unknown()).nullable(),
  op: z.enum(['read', 'write']),
  path: z.string().max(1024),
  value: z.unknown().optional(),
  /** A rules document to check instead of the saved one (the console's unsaved edits); nothing is stored. */
  rules: z.record(z.string(), z.unknown()).optional()
}).strict()

export type RulesCheckBody = z.infer<typeof rulesCheckBody>

/** The simulator's answer: `rule` names the deciding rule (`users.$uid/.write`). */
export const rulesCheckResult = z.object({
  allowed: z.boolean(),
  rule: z.string().optional()
})

export type RulesCheckResult = z.infer<typeof rulesCheckResult>

/** The answers' OpenAPI components (shared/api/index.ts). A rules document stays JsonValue: its shape is the compiler's. */
export const RULES_RESPONSES = {
  AppAuth: appAuthView,
  RulesCheckResult: rulesCheckResult
}
