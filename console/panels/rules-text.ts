// The Rules tab's text (docs/rules.md): the starter rules, reading the document and the
// simulator's fields as typed, and saying in words what the simulator and the trust setting
// answered. The server decides what valid rules are (INVALID_RULES names the rule and its CEL
// error); here only what is not a rules document at all is caught. Pure: test/console/rules-text.test.ts.
import type { AppAuth, Json, JsonObject, JsonSchema, RulesDecision, RulesDocument } from '../../shared/client/index.js'
import { isJsonObject, parseJsonText } from '../json-text.js'

/** The worked example of docs/rules.md: per-user documents and a public leaderboard. */
export const STARTER_RULES: RulesDocument = {
  rules: {
    users: { $uid: { '.read': 'auth.sub == uid', '.write': 'auth.sub == uid' } },
    leaderboard: {
      '.read': true,
      $player: { score: { '.write': 'auth.sub == player && (data == null || newData > data)' } }
    }
  }
}

const RULE_DESCRIPTION = 'A CEL expression over auth, data, newData, now and the wildcards above, or true/false'

/**
 * The shape of a rules document for the editor's completion and hints (console/editor/schema-assist.ts):
 * every level offers ".read" and ".write"; any other key is a level below. Only a help: the
 * server's compiler is the judge.
 */
export const RULES_SHAPE: JsonSchema = {
  type: 'object',
  required: ['rules'],
  additionalProperties: false,
  properties: { rules: { $ref: '#/$defs/level' } },
  $defs: {
    level: {
      type: 'object',
      properties: {
        '.read': { type: ['string', 'boolean'], description: `Who may read here and below. ${RULE_DESCRIPTION}` },
        '.write': { type: ['string', 'boolean'], description: `Who may write here and below. ${RULE_DESCRIPTION}` }
      },
      additionalProperties: { $ref: '#/$defs/level' }
    }
  }
}

export type ParsedRules = { ok: true, document: RulesDocument } | { ok: false, message: string }

export function parseRulesText (text: string): ParsedRules {
  const parsed = parseJsonText(text)
  if (!parsed.ok) return parsed
  if (!isJsonObject(parsed.value)) return { ok: false, message: 'Rules are a JSON object: { "rules": { … } }.' }
  return { ok: true, document: parsed.value }
}

export type ParsedClaims = { ok: true, auth: JsonObject | null } | { ok: false, message: string }

/** The simulated caller: its claims as typed (a JSON object with a string "sub"), or null when not signed in. */
export function parseClaims (text: string, signedIn: boolean): ParsedClaims {
  if (!signedIn) return { ok: true, auth: null }
  if (text.trim() === '') return { ok: false, message: 'Type the token\'s claims, e.g. {"sub": "u1"}, or choose "not signed in".' }
  const parsed = parseJsonText(text)
  if (!parsed.ok) return parsed
  if (!isJsonObject(parsed.value)) return { ok: false, message: 'Claims are a JSON object, e.g. {"sub": "u1", "role": "admin"}.' }
  // The server accepts only tokens with a string sub (docs/rules.md): a caller without one cannot exist.
  if (typeof parsed.value.sub !== 'string') return { ok: false, message: 'A signed-in app user\'s claims have a string "sub", e.g. {"sub": "u1"}.' }
  return { ok: true, auth: parsed.value }
}

/** A simulated write's value: empty is a delete (undefined), JSON when it parses (10, true, {"a": 1}), else the text itself. */
export function valueOfText (text: string): Json | undefined {
  if (text.trim() === '') return undefined
  const parsed = parseJsonText(text)
  return parsed.ok ? parsed.value : text
}

/** The path as the simulator shows it: "" is the whole content. */
const placeOf = (path: string) => path === '' ? 'the whole content' : path

/** The simulator's answer in words, e.g. "Allowed: write at users.u1.name, by users.$uid/.write". */
export function decisionText (decision: RulesDecision, op: 'read' | 'write', path: string, hasRules: boolean): string {
  const what = `${op} at ${placeOf(path)}`
  if (decision.allowed) return `Allowed: ${what}, by ${decision.rule ?? 'a rule'}`
  if (!hasRules) return `Denied: ${what}; the project has no rules, so app users may do nothing`
  return `Denied: ${what}; no ".${op}" rule at ${placeOf(path)} or above it is true`
}

/**
 * Where in the document INVALID_RULES points: its message names the rule, `at "users.$uid/.write": …`
 * (a level: `at "users"`, the document: `at "/"`); as JSON steps of the document, to mark it in the
 * text. Null when the message names no place (the size limit).
 */
export function ruleStepsOf (message: string): string[] | null {
  const named = /\bat "((?:[^"\\]|\\.)*)":/.exec(message)
  if (!named) return null
  const where = named[1] as string
  if (where === '/') return []
  // A rule ends in "/.read" or "/.write" (the level before it may itself hold a "/" in a key).
  const rule = /^(.*)\/(\.read|\.write)$/.exec(where)
  const level = rule ? rule[1] as string : where
  return ['rules', ...(level === '' ? [] : level.split('.')), ...(rule ? [rule[2] as string] : [])]
}

const KIND_TEXT: Record<AppAuth['kind'], string> = {
  hs256Secret: 'a shared HS256 secret',
  jwks: 'an inline JWK set',
  jwksUrl: 'a JWKS URL'
}

/** How tokens are checked, in words: "HS256 secret", "a JWK set of 2 keys", "the JWKS at https://…". */
export function authKindText (auth: AppAuth): string {
  if (auth.kind === 'jwks' && auth.jwks) return `an inline JWK set of ${auth.jwks.keys.length} ${auth.jwks.keys.length === 1 ? 'key' : 'keys'}`
  if (auth.kind === 'jwksUrl' && auth.jwksUrl) return `the JWKS at ${auth.jwksUrl}`
  return KIND_TEXT[auth.kind]
}
