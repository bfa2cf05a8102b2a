// Response bodies, as zod schemas so the reference is generated the same way as the
// request bodies (which come from shared/schemas.ts, the schemas the routes validate with).
import { z } from 'zod'
import { ERRORS, type ErrorCode } from '../../shared/errors.js'
import { NARROWABLE_OPERATIONS } from '../../shared/key-scope.js'

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

export const RESPONSE_SCHEMAS = {
  Error: z.object({
    message: z.string().meta({ description: 'For people; may add detail to the catalogue message. Never holds internals.' }),
    code: z.enum(errorCodes).meta({ description: 'Stable code from the error catalogue' }),
    errors: z.array(z.object({
      path: z.string().meta({ description: 'Dot path of the value at fault; "" for the root' }),
      message: z.string()
    })).optional().meta({ description: 'Only with SCHEMA_VIOLATION: how the content would break the project\'s schema' })
  }).meta({ description: 'Every error response has this body.' }),
  Message: z.object({ message: z.string() }),
  SchemaSet: z.object({ message: z.string(), setBy: z.string().meta({ description: 'Who set the schema: "@alice", or "operator" for the CLI' }), setAt: isoTime }),
  Session: z.object({ token: z.string().meta({ description: 'Session token (prefix cds_); send as Authorization: Bearer <token>' }), username: displayName, expiresAt: isoTime }),
  Me: z.object({ username: displayName, createdAt: isoTime }),
  Project: project,
  ProjectList: z.object({ projects: z.array(project) }),
  ApiKey: apiKey,
  NewApiKey: apiKey.extend({ key: z.string().meta({ description: 'The secret (prefix cdk_), shown only in this response' }) }),
  ApiKeyList: z.object({ keys: z.array(apiKey) }),
  Member: member,
  MemberList: z.object({ members: z.array(member) }),
  Health: z.object({ status: z.literal('ok') }),
  Ready: z.object({ status: z.literal('ready'), checks: z.record(z.string(), z.literal('ok')) }),
  Content: z.record(z.string(), z.unknown()).meta({ description: "The project's whole content: a JSON object" }),
  JsonValue: z.unknown().meta({ description: 'Any JSON value' })
} satisfies Record<string, z.ZodType>

export type ResponseSchemaName = keyof typeof RESPONSE_SCHEMAS
