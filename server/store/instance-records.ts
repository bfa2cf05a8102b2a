// The whole instance as records, store-independent (docs/design.md §18, docs/operations.md
// "Moving between stores"): what `contentd export --all` writes, one JSON object per line,
// and `contentd import --all` reads back into an empty store of either kind.
//
// The first line is the header (format name and version); then, in this order:
// users, API keys, and per project: the project, its schema, its current content, its
// members, its change log's checkpoints and entries (so history and `?version=N` answer the
// same after an import), its webhooks, its rules and the app sign-in it trusts (docs/design.md
// §17). Each kind is ordered by id (entries by version), so
// export → import → export gives the same lines.
//
// Left out on purpose: sessions (people log in again), Idempotency-Key records (they expire
// within IDEMPOTENCY_TTL anyway), webhook deliveries and leases (a node's claim; the cursor
// travels, so nothing is sent twice or skipped). Secrets travel as they are stored: password
// and key hashes, webhook secrets and HS256 app secrets encrypted with WEBHOOK_SECRET_KEY.
import { z } from 'zod'
import type { ChangeEntry } from '../../shared/events.js'
import type { JsonObject } from '../../shared/json.js'
import { NARROWABLE_OPERATIONS } from '../../shared/key-scope.js'
import type { JsonSchema } from '../schema/compile.js'
import type { ApiKeyRecord, MemberRole, ProjectRecord, UserRecord } from './types.js'
import type { AppAuthRecord, RulesRecord } from './app-rules-types.js'
import type { WebhookRecord } from './webhook-types.js'

export const INSTANCE_FORMAT = 'contentd-instance'
export const INSTANCE_FORMAT_VERSION = 1

const text = z.string()
const id = z.string().min(1)
const nullableList = z.array(z.string()).nullable()
const version = z.number().int().nonnegative()
const jsonObject = z.record(z.string(), z.unknown()).refine(value => !Array.isArray(value), 'expected an object')

const header = z.object({ type: z.literal('header'), format: z.literal(INSTANCE_FORMAT), version: z.literal(INSTANCE_FORMAT_VERSION) }).strict()
const user = z.object({ type: z.literal('user'), id, username: id, passwordHash: id, createdAt: text }).strict()
const apiKey = z.object({
  type: z.literal('apiKey'),
  id,
  userId: id,
  name: text,
  prefix: text,
  keyHash: id,
  permission: z.enum(['read', 'write']),
  projectIds: nullableList,
  paths: nullableList,
  ops: z.array(z.enum(NARROWABLE_OPERATIONS)).nullable(),
  expiresAt: text.nullable(),
  createdAt: text
}).strict()
const project = z.object({
  type: z.literal('project'), id, ownerId: id, ownerName: id, slug: id, name: text, createdAt: text, version, historyFloor: version
}).strict()
const schema = z.object({ type: z.literal('schema'), projectId: id, revision: id, schema: z.union([jsonObject, z.boolean()]), setBy: text, setAt: text }).strict()
const content = z.object({ type: z.literal('content'), projectId: id, version, content: jsonObject }).strict()
const member = z.object({ type: z.literal('member'), projectId: id, userId: id, role: z.enum(['viewer', 'editor']) }).strict()
const checkpoint = z.object({ type: z.literal('checkpoint'), projectId: id, version, content: jsonObject.nullable() }).strict()
/** An entry as docs/design.md §9 gives it, without `project` (the project is the record's). */
const entry = z.object({
  version: version.positive(),
  op: z.string().min(1),
  at: text,
  actor: z.object({ type: z.string() }).passthrough()
}).passthrough()
const change = z.object({ type: z.literal('change'), projectId: id, entry }).strict()
const webhook = z.object({
  type: z.literal('webhook'),
  id,
  projectId: id,
  url: text,
  paths: nullableList,
  ops: nullableList,
  description: text.nullable(),
  secretCiphertext: id,
  createdAt: text,
  cursor: version,
  failures: version,
  failingSince: text.nullable(),
  nextAttemptAt: text.nullable(),
  disabledAt: text.nullable(),
  disabledReason: text.nullable()
}).strict()

const rules = z.object({ type: z.literal('rules'), projectId: id, revision: id, document: jsonObject, setBy: text, setAt: text }).strict()
const appAuth = z.object({
  type: z.literal('appAuth'),
  projectId: id,
  revision: id,
  issuer: text,
  audience: text.nullable(),
  jwks: jsonObject.nullable(),
  jwksUrl: text.nullable(),
  secretCiphertext: text.nullable(),
  setBy: text,
  setAt: text
}).strict()

const record = z.discriminatedUnion('type', [user, apiKey, project, schema, content, member, checkpoint, change, webhook, rules, appAuth])

export type InstanceHeader = z.infer<typeof header>
export type UserLine = { type: 'user' } & UserRecord
export type ApiKeyLine = { type: 'apiKey' } & ApiKeyRecord
export type ProjectLine = { type: 'project', historyFloor: number } & ProjectRecord
export interface SchemaLine { type: 'schema', projectId: string, revision: string, schema: JsonSchema, setBy: string, setAt: string }
export interface ContentLine { type: 'content', projectId: string, version: number, content: JsonObject }
export interface MemberLine { type: 'member', projectId: string, userId: string, role: MemberRole }
/** `content` null: the change at `version` replaced the whole content and holds it (§9's layout in both stores). */
export interface CheckpointLine { type: 'checkpoint', projectId: string, version: number, content: JsonObject | null }
export interface ChangeLine { type: 'change', projectId: string, entry: Omit<ChangeEntry, 'project'> }
export type WebhookLine = { type: 'webhook' } & Omit<WebhookRecord, 'leaseOwner' | 'leaseUntil'>
export type RulesLine = { type: 'rules', projectId: string } & RulesRecord
export type AppAuthLine = { type: 'appAuth', projectId: string } & AppAuthRecord

/** One record of the instance, after the header. */
export type InstanceRecord = UserLine | ApiKeyLine | ProjectLine | SchemaLine | ContentLine | MemberLine | CheckpointLine | ChangeLine | WebhookLine | RulesLine | AppAuthLine

/** §9's member order; members of later formats, if any, follow in their own order. */
const ENTRY_ORDER = ['version', 'op', 'path', 'value', 'index', 'operations', 'revertedTo', 'at', 'actor'] as const

/**
 * A stored entry (without `project`) with its members in §9's order, whatever order the
 * store kept them in (MongoDB's change documents put `at` and `actor` before `path`), so the
 * same history gives the same line from every store.
 */
export function orderedEntry (stored: Record<string, unknown>): ChangeLine['entry'] {
  const entry: Record<string, unknown> = {}
  // `value` may be null (set to null); the other members are absent when null (history.ts).
  for (const key of ENTRY_ORDER) if (stored[key] !== undefined && (key === 'value' || stored[key] !== null)) entry[key] = stored[key]
  // `idempotency`: MongoDB's remembered Idempotency-Key (docs/design.md §19) is the caller's, never exported;
  // touchedPaths: MongoDB's path index (mongodb/path-index.ts), rebuilt on import.
  const known = new Set<string>([...ENTRY_ORDER, 'project', 'projectId', '_id', 'idempotency', 'touchedPaths'])
  for (const [key, value] of Object.entries(stored)) if (!known.has(key) && value !== undefined) entry[key] = value
  return entry as unknown as ChangeLine['entry']
}

export function headerLine (): string {
  const line: InstanceHeader = { type: 'header', format: INSTANCE_FORMAT, version: INSTANCE_FORMAT_VERSION }
  return JSON.stringify(line)
}

/** A line of an export that cannot be imported: import stops at it, naming it. */
export class InstanceLineError extends Error {
  constructor (readonly line: number, what: string) {
    super(`line ${line}: ${what.replace(/\s*\n\s*/g, ' ')}`)
    this.name = 'InstanceLineError'
  }
}

function firstIssue (error: z.ZodError): string {
  const issue = error.issues[0]
  if (!issue) return 'not a record'
  const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : ''
  return `${where}${issue.message}`
}

function parseJson (textLine: string, lineNumber: number): unknown {
  try {
    return JSON.parse(textLine)
  } catch (error) {
    throw new InstanceLineError(lineNumber, `not JSON (${(error as Error).message})`)
  }
}

/** Checks the header (line 1). */
export function parseHeader (textLine: string): void {
  const parsed = header.safeParse(parseJson(textLine, 1))
  if (!parsed.success) throw new InstanceLineError(1, `not a ${INSTANCE_FORMAT} v${INSTANCE_FORMAT_VERSION} header (${firstIssue(parsed.error)})`)
}

/** One record line, checked for its shape: InstanceLineError names the line and what is wrong. */
export function parseRecord (textLine: string, lineNumber: number): InstanceRecord {
  const parsed = record.safeParse(parseJson(textLine, lineNumber))
  if (!parsed.success) throw new InstanceLineError(lineNumber, firstIssue(parsed.error))
  return parsed.data as InstanceRecord
}

/**
 * The records of an export's lines (line 1 the header; blank lines are refused, so a
 * truncated or spliced file does not pass unseen). Throws InstanceLineError at the first
 * bad line, and when there is no header at all.
 */
export async function * recordsOfLines (lines: AsyncIterable<string>): AsyncIterable<InstanceRecord> {
  let lineNumber = 0
  for await (const textLine of lines) {
    lineNumber += 1
    if (lineNumber === 1) parseHeader(textLine)
    else yield parseRecord(textLine, lineNumber)
  }
  if (lineNumber === 0) throw new InstanceLineError(1, `empty input: expected a ${INSTANCE_FORMAT} header`)
}

/** What an import loaded, counted per kind of record. */
export type ImportCounts = Record<InstanceRecord['type'], number>

export function emptyCounts (): ImportCounts {
  return { user: 0, apiKey: 0, project: 0, schema: 0, content: 0, member: 0, checkpoint: 0, change: 0, webhook: 0, rules: 0, appAuth: 0 }
}

/** The refusal of an import into a store that holds data. */
export const NOT_EMPTY_MESSAGE = 'the store is not empty (it holds a user or a project): import --all loads into an empty store only'

/** An import refused before it wrote anything (a store that holds data). */
export class ImportRefusedError extends Error {
  constructor (message = NOT_EMPTY_MESSAGE) {
    super(message)
    this.name = 'ImportRefusedError'
  }
}
