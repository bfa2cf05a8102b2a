// Response bodies, as zod schemas so the reference is generated the same way as the
// request bodies (which come from shared/schemas.ts, the schemas the routes validate with).
import { z } from 'zod'
import { ERRORS, type ErrorCode } from '../../shared/errors.js'
import { NARROWABLE_OPERATIONS } from '../../shared/key-scope.js'
import { OPERATION_NAMES } from '../../shared/operations.js'

const isoTime = z.string().meta({ format: 'date-time' })
const displayName = z.string().regex(/^@[a-z0-9-]+$/).meta({ description: 'The user with "@", e.g. "@alice"' })
const role = z.enum(['owner', 'editor', 'viewer'])

export const errorCodes = Object.keys(ERRORS) as [ErrorCode, ...ErrorCode[]]

const project = z.object({ username: displayName, slug: z.string(), name: z.string(), createdAt: isoTime, version: z.number().int().min(0), role: role.optional() })
const apiKey = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string().meta({ description: 'The visible start of the key, to tell keys apart' }),
  permission: z.enum(['read', 'write']),
  projects: z.array(z.string()).nullable().meta({ description: 'Project references the key is limited to; null: every project the user can access' }),
  paths: z.array(z.string()).nullable().meta({ description: 'Dot paths the key is narrowed to; null: not narrowed to paths' }),
  ops: z.array(z.enum(NARROWABLE_OPERATIONS)).nullable().meta({ description: 'Operations the key is narrowed to; null: not narrowed to operations' }),
  expiresAt: isoTime.nullable(),
  createdAt: isoTime
})
const member = z.object({ username: displayName, role: z.enum(['viewer', 'editor']) })
const nextCursor = z.string().nullable().meta({ description: 'Pass as ?cursor= for the next page; null on the last page' })

const actor = z.union([
  z.object({ type: z.literal('user'), name: displayName }),
  z.object({ type: z.literal('key'), id: z.string(), name: z.string().meta({ description: "The key's name (never its secret)" }) }),
  z.object({ type: z.literal('system'), name: z.string().meta({ description: '"cli": content imported by the operator' }) }),
  z.object({ type: z.literal('app'), sub: z.string().meta({ description: "An app user (docs/rules.md): the `sub` of the app's own token" }) })
]).meta({ description: 'Who made the change: a user (session), an API key, an app user, or the operator (system). Never a secret.' })

const change = z.object({
  project: z.string().meta({ description: 'The project, e.g. "@alice/demo"' }),
  version: z.number().int().min(1).meta({ description: "The project's version right after this change" }),
  op: z.enum([...OPERATION_NAMES, 'revert', 'batch', 'patch']),
  path: z.string().optional().meta({ description: 'Dot path; absent for update and revert' }),
  value: z.unknown().optional().meta({ description: 'increment/decrement: the amount; set/push/insert: the value; update: the new content; revert: the content restored. Absent for delete.' }),
  index: z.number().int().optional().meta({ description: 'insert only' }),
  operations: z.array(z.unknown()).optional().meta({ description: 'batch: its operations with dot paths; patch: the RFC 6902 operations as applied' }),
  revertedTo: z.number().int().optional().meta({ description: 'revert only: the version whose content was restored' }),
  at: isoTime.meta({ description: 'Commit time' }),
  actor
}).meta({ description: 'One entry of the change log (the same object as the Socket.IO `change` event).' })

// Webhooks (docs/design.md §11).
const webhookFields = {
  id: z.string().meta({ description: 'whk_…' }),
  url: z.string(),
  paths: z.array(z.string()).nullable().meta({ description: 'Dot-path prefixes; null: every path' }),
  ops: z.array(z.string()).nullable().meta({ description: 'Operation names; null: every operation' }),
  createdAt: isoTime
}
const webhook = z.object({
  ...webhookFields,
  description: z.string().nullable(),
  cursor: z.number().int().min(0).meta({ description: 'Every version up to this one is delivered, filtered out or reported lost' }),
  enabled: z.boolean().meta({ description: 'false once disabled after 3 days of failures' }),
  disabledReason: z.string().nullable(),
  failingSince: isoTime.nullable(),
  nextAttemptAt: isoTime.nullable()
}).meta({ description: 'A webhook, never with its secret.' })
const delivery = z.object({
  version: z.number().int().min(1),
  status: z.number().int().nullable().meta({ description: "The receiver's HTTP status; null without an answer" }),
  outcome: z.enum(['delivered', 'failed', 'lost']).meta({ description: 'lost: the versions up to `version` left the retained history before delivery (see `error`)' }),
  attempt: z.number().int().min(0),
  error: z.string().optional(),
  at: isoTime,
  durationMs: z.number().int().min(0)
})

export const RESPONSE_SCHEMAS = {
  Error: z.object({
    message: z.string().meta({ description: 'For people; may add detail to the catalogue message. Never holds internals.' }),
    code: z.enum(errorCodes).meta({ description: 'Stable code from the error catalogue' }),
    errors: z.array(z.object({
      path: z.string().meta({ description: 'Dot path of the value at fault; "" for the root' }),
      message: z.string()
    })).optional().meta({ description: 'Only with SCHEMA_VIOLATION: how the content would break the project\'s schema' }),
    operation: z.number().int().optional().meta({ description: 'Batch and patch: the index of the operation that failed' })
  }).meta({ description: 'Every error response has this body.' }),
  Message: z.object({ message: z.string() }),
  SchemaSet: z.object({ message: z.string(), setBy: z.string().meta({ description: 'Who set the schema: "@alice", or "operator" for the CLI' }), setAt: isoTime }),
  Applied: z.object({ message: z.string(), version: z.number().int().min(1).meta({ description: 'The version the batch or patch created' }) }),
  Session: z.object({ token: z.string().meta({ description: 'Session token (prefix cds_); send as Authorization: Bearer <token>' }), username: displayName, expiresAt: isoTime }),
  Me: z.object({ username: displayName, createdAt: isoTime }),
  Project: project,
  ProjectList: z.object({ projects: z.array(project), nextCursor }),
  ApiKey: apiKey,
  NewApiKey: apiKey.extend({ key: z.string().meta({ description: 'The secret (prefix cdk_), shown only in this response' }) }),
  ApiKeyList: z.object({ keys: z.array(apiKey), nextCursor }),
  Member: member,
  MemberList: z.object({ members: z.array(member), nextCursor }),
  Health: z.object({ status: z.literal('ok') }),
  Ready: z.object({
    status: z.literal('ready'),
    checks: z.record(z.string(), z.literal('ok')),
    backup: z.object({ lastAt: isoTime.nullable() }).optional().meta({ description: 'With BACKUP_DIR: when the last good scheduled backup began (null before the first)' })
  }),
  Actor: actor,
  Change: change,
  ChangesPage: z.object({
    version: z.number().int().min(0).meta({ description: "The project's current version" }),
    changes: z.array(change).meta({ description: 'Entries with a version above `since`, ascending' }),
    more: z.boolean().meta({ description: 'More entries follow (the page ended at `limit` or at CHANGES_PAGE_BYTES): ask again with the last version as `since`' })
  }),
  Content: z.record(z.string(), z.unknown()).meta({ description: "The project's whole content: a JSON object" }),
  JsonValue: z.unknown().meta({ description: 'Any JSON value' }),
  NewWebhook: z.object({ ...webhookFields, secret: z.string().meta({ description: 'The signing secret (whsec_…), shown only in this response' }) }),
  WebhookList: z.object({ webhooks: z.array(webhook), nextCursor }),
  DeliveryList: z.object({ deliveries: z.array(delivery).meta({ description: 'The last 100 attempts, newest first' }) }),
  OpenApiDocument: z.looseObject({ openapi: z.string(), info: z.record(z.string(), z.unknown()), paths: z.record(z.string(), z.unknown()) }).meta({ description: 'An OpenAPI 3.1 document (this one)' }),
  PingResult: z.object({ delivered: z.boolean(), status: z.number().int().nullable(), error: z.string().optional(), durationMs: z.number().int().min(0) })
} satisfies Record<string, z.ZodType>

export type ResponseSchemaName = keyof typeof RESPONSE_SCHEMAS
