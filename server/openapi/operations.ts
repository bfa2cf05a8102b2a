// Every HTTP endpoint contentd serves, with the body schema its route validates with and
// the error codes it can answer. spec.ts turns the registered routes (server/http/
// route-table.ts) into OpenAPI 3.1 with this documentation; a test checks that it documents
// exactly the registered routes. The content operations' schemas and messages come from the
// shared operation table.
import { z } from 'zod'
import type { ErrorCode } from '../../shared/errors.js'
import { PATH_OPERATION_NAMES, PATH_OPERATIONS, UPDATE_MESSAGE, type PathOperationName } from '../../shared/operation-table.js'
import { BATCH_MESSAGE } from '../../shared/batch.js'
import { batchBodySchema, patchBodySchema } from '../../shared/batch-request.js'
import { PATCH_MEDIA_TYPE, PATCH_MESSAGE } from '../../shared/json-patch.js'
import { amountBody, apiKeyBody, credentialsBody, insertBody, memberBody, pathBody, projectBody, revertBody, valueBody } from '../../shared/schemas.js'
import { webhookBody } from '../../shared/webhooks.js'
import { appAuthBody, rulesCheckBody } from '../../shared/api/rules.js'
import { CHANGES_PAGE_DEFAULT, CHANGES_PAGE_MAX } from '../http/history-query.js'
import type { ResponseSchemaName } from '../../shared/api/index.js'

/** none: public; any: session token or API key; session: session token only; metrics: METRICS_TOKEN unless METRICS=open. */
export type AuthKind = 'none' | 'any' | 'session' | 'metrics'

export interface ApiOperation {
  method: 'get' | 'post' | 'put' | 'delete' | 'patch'
  /** OpenAPI form: /api/{username}/{projectSlug}/content */
  path: string
  tag: string
  summary: string
  description?: string
  auth: AuthKind
  /** The zod schema the route validates its body with, and its component name. */
  body?: { name: string, schema: z.ZodType, required?: boolean, description?: string, contentType?: string }
  /** lastModified: the answer says when the resource last changed. */
  success: { status: number, description: string, schema?: ResponseSchemaName, contentType?: string | string[], etag?: boolean, lastModified?: boolean }
  errors: ErrorCode[]
  /** schema: what the route accepts (default: a string). */
  query?: Array<{ name: string, description: string, required?: boolean, schema?: Record<string, unknown> }>
  /** The credential may also come as ?access_token= (for EventSource, which sends no headers). */
  tokenInQuery?: boolean
  headers?: Array<{ name: string, description: string }>
  /** Answers 304 Not Modified to a matching If-None-Match. */
  notModified?: boolean
  /** A code answered here with another status than the catalogue's (409 SCHEMA_VIOLATION). */
  statuses?: Partial<Record<ErrorCode, number>>
}

const JSON_BODY: ErrorCode[] = ['INVALID_JSON', 'INVALID_BODY', 'BODY_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE']
const PROJECT: ErrorCode[] = ['INVALID_USERNAME', 'USER_NOT_FOUND', 'PROJECT_NOT_FOUND']
const READ: ErrorCode[] = [...PROJECT, 'FORBIDDEN', 'KEY_PERMISSION_DENIED']
const OWNER: ErrorCode[] = [...PROJECT, 'FORBIDDEN', 'SESSION_REQUIRED', 'OWNER_REQUIRED']
const WRITE: ErrorCode[] = [...READ, ...JSON_BODY, 'INVALID_PATH', 'PATH_CONFLICT', 'INVALID_ARRAY_INDEX', 'PRECONDITION_FAILED', 'CONTENT_TOO_LARGE', 'KEY_SCOPE_DENIED', 'SCHEMA_VIOLATION', 'RULES_DENIED']
const SCHEMA = '/api/{username}/{projectSlug}/schema'
// App users and rules (docs/design.md §17, docs/rules.md).
const AUTH = '/api/{username}/{projectSlug}/auth'
const RULES = '/api/{username}/{projectSlug}/rules'
const NARROWED = 'A key narrowed to paths or operations (docs/design.md §12) may use this only at or below one of its paths and with one of its ops: 403 `KEY_SCOPE_DENIED` otherwise. '
const CHECKED = 'With a project schema, a result that breaks it is 422 `SCHEMA_VIOLATION` listing `errors: [{path, message}]`, and nothing changes.'

/** ?limit=&cursor= of the paginated lists (docs/api.md#pages). */
const PAGE_QUERY = [
  { name: 'limit', description: 'How many items, 1 to 100 (default 100).', schema: { type: 'integer', minimum: 1, maximum: 100, default: 100 } },
  { name: 'cursor', description: 'The `nextCursor` of the previous page; absent for the first page.' }
]

const IDEMPOTENCY_KEY = { name: 'Idempotency-Key', description: '1 to 255 visible ASCII characters. The first answer is kept (IDEMPOTENCY_TTL, default 24h) per project, caller and key: a retry of the same request gets it again with `Idempotent-Replayed: true` and changes nothing; another request under the key is 422, a retry while the first runs 409. A user holds at most MAX_IDEMPOTENCY_KEYS_PER_USER live records (all sessions and keys); past it a new key is 429 RATE_LIMITED with Retry-After, not applied.' }
const IDEMPOTENT: ErrorCode[] = ['INVALID_IDEMPOTENCY_KEY', 'IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_IN_PROGRESS']
/** A version in a query: the routes accept a canonical non-negative integer (docs/design.md §9). */
const VERSION = { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER }
const IF_MATCH = { name: 'If-Match', description: 'Apply only when the content is at this version, e.g. "7" (several may be listed, or *); otherwise 412 and nothing changes.' }
const IF_NONE_MATCH = { name: 'If-None-Match', description: 'Apply only when the content is not at this version (`*`: never, the content always exists); otherwise 412 and nothing changes.' }
// docs/design.md §13b: reads evaluate If-Match too (412), before If-None-Match (304).
const READ_CONDITIONS = [
  { name: 'If-Match', description: 'A version, e.g. "7" (several may be listed, or *): 412 unless the answer would be at one of them.' },
  { name: 'If-None-Match', description: 'A version, e.g. "7": 304 when the answer would be at it.' }
]
const CONTENT = '/api/{username}/{projectSlug}/content'
// A one-shot live query (docs/design.md §16, docs/queries.md): with `orderBy` and `limit` the
// answer is `{ version, items: [{ key, value }] }` (shared/api/queries.ts), the ordered children of `path`.
const QUERY_PARAMS = [
  { name: 'orderBy', description: 'Live query: order the children of `path` by `key`, `value` or a child dot path; answers `{version, items}` (docs/queries.md)' },
  { name: 'direction', description: 'Live query: `asc` (default) or `desc`' },
  { name: 'limit', description: 'Live query: how many children, 1 to 1000 (required with `orderBy`)' },
  { name: 'startAt', description: 'Live query: inclusive lower bound on the order value, as a JSON text (`10`, `%22b%22`)' },
  { name: 'endAt', description: 'Live query: inclusive upper bound on the order value, as a JSON text' }
]

/** Component names (and notes) of the operation table's body schemas, by schema. */
const BODY_NAMES = new Map<z.ZodType, { name: string, description?: string }>([
  [amountBody, { name: 'AmountBody', description: '`value` is the amount (finite number, default 1).' }],
  [valueBody, { name: 'ValueBody' }],
  [pathBody, { name: 'PathBody' }],
  [insertBody, { name: 'InsertBody' }]
])

const messageBody = (message: string) => `\`{"message": "${message}"}\``

/** What the reference says about each operation of the table, beyond its schema and message. */
const PATH_OPERATION_DOCS: Record<PathOperationName, { summary: string, description: string, errors: ErrorCode[] }> = {
  increment: { summary: 'Add to a number', description: 'A missing target is created as `value`; a target that is not a number (null included) is 400.', errors: ['NOT_A_NUMBER', 'NON_FINITE_RESULT', 'INVALID_VALUE', 'INDEX_OUT_OF_RANGE'] },
  decrement: { summary: 'Subtract from a number', description: 'A missing target is created as `-value`; a target that is not a number is 400.', errors: ['NOT_A_NUMBER', 'NON_FINITE_RESULT', 'INVALID_VALUE', 'INDEX_OUT_OF_RANGE'] },
  set: { summary: 'Write a value', description: 'Creates missing intermediates as objects. On an array index: index < length replaces, index = length appends, index > length is 400.', errors: ['INVALID_VALUE', 'INDEX_OUT_OF_RANGE'] },
  delete: { summary: 'Remove a value', description: 'A missing path is a success that changes nothing. Removing an array element shifts later elements down.', errors: [] },
  push: { summary: 'Append to an array', description: 'A missing target is created as `[value]`; a target that is not an array is 400. An array value is pushed as one element.', errors: ['INVALID_VALUE', 'NOT_AN_ARRAY', 'INDEX_OUT_OF_RANGE'] },
  insert: { summary: 'Insert into an array', description: '0 <= index <= length; a missing target is created as `[value]` when index is 0.', errors: ['INVALID_VALUE', 'NOT_AN_ARRAY', 'INDEX_OUT_OF_RANGE'] }
}

const pathOperation = (op: PathOperationName, { summary, description, errors }: typeof PATH_OPERATION_DOCS[PathOperationName]): ApiOperation => {
  const { schema, message } = PATH_OPERATIONS[op]
  const names = BODY_NAMES.get(schema)
  if (!names) throw new Error(`openapi: no component name for the body schema of ${op}`)
  return {
    method: 'post',
    path: `${CONTENT}/${op}`,
    tag: 'Content',
    summary,
    description: `${description} ${NARROWED}${CHECKED}`,
    auth: 'any',
    body: { ...names, schema },
    success: { status: 200, description: messageBody(message), schema: 'Message', etag: true },
    errors: [...WRITE, ...errors, ...IDEMPOTENT],
    headers: [IF_MATCH, IF_NONE_MATCH, IDEMPOTENCY_KEY]
  }
}

// Update's body is free-form content: validateOperation checks it is a JSON object that
// follows the value rules of docs/design.md §3.
const contentBody = z.record(z.string(), z.unknown()).meta({ description: 'The new content: any JSON object' })
// A schema is checked by Ajv against the draft 2020-12 meta-schema, not by zod.
const jsonSchemaBody = z.union([z.record(z.string(), z.unknown()), z.boolean()]).meta({ description: 'A JSON Schema (draft 2020-12): an object, or true or false' })

export const API_OPERATIONS: ApiOperation[] = [
  // Accounts
  { method: 'post', path: '/api/auth/signup', tag: 'Accounts', summary: 'Create a user and sign in', auth: 'none', body: { name: 'Credentials', schema: credentialsBody }, success: { status: 201, description: 'The user exists and this session token is valid.', schema: 'Session' }, errors: [...JSON_BODY, 'PASSWORD_TOO_COMMON', 'SIGNUP_DISABLED', 'USERNAME_TAKEN'] },
  { method: 'post', path: '/api/auth/login', tag: 'Accounts', summary: 'Sign in', auth: 'none', body: { name: 'Credentials', schema: credentialsBody }, success: { status: 200, description: 'A new session token.', schema: 'Session' }, errors: [...JSON_BODY, 'WRONG_CREDENTIALS'] },
  { method: 'post', path: '/api/auth/logout', tag: 'Accounts', summary: 'End this session', description: 'The token stops working at once, and its live subscriptions end.', auth: 'session', success: { status: 200, description: 'Logged out.', schema: 'Message' }, errors: ['SESSION_REQUIRED'] },
  { method: 'get', path: '/api/me', tag: 'Accounts', summary: 'Who the credential belongs to', auth: 'any', success: { status: 200, description: 'The user.', schema: 'Me' }, errors: [] },
  // Projects and members
  { method: 'post', path: '/api/projects', tag: 'Projects', summary: 'Create a project', description: 'Its content starts as `{}` at version 0.', auth: 'session', body: { name: 'NewProject', schema: projectBody }, success: { status: 201, description: 'The project.', schema: 'Project' }, errors: [...JSON_BODY, 'SESSION_REQUIRED', 'QUOTA_EXCEEDED', 'PROJECT_EXISTS'] },
  { method: 'get', path: '/api/projects', tag: 'Projects', summary: 'Projects the caller owns or is a member of', description: "With an API key, narrowed to the key's projects. One page at a time, by owner and slug.", auth: 'any', success: { status: 200, description: 'A page of projects, with the caller\'s role in each, and the cursor of the next page (null after the last).', schema: 'ProjectList' }, errors: ['INVALID_QUERY'], query: PAGE_QUERY },
  { method: 'get', path: '/api/{username}/{projectSlug}', tag: 'Projects', summary: 'One project', auth: 'any', success: { status: 200, description: 'The project and the caller\'s role.', schema: 'Project' }, errors: READ },
  { method: 'delete', path: '/api/{username}/{projectSlug}', tag: 'Projects', summary: 'Delete a project and its content', auth: 'session', success: { status: 200, description: 'Deleted.', schema: 'Message' }, errors: OWNER },
  { method: 'get', path: '/api/{username}/{projectSlug}/members', tag: 'Projects', summary: 'List members', description: 'One page at a time, by username.', auth: 'session', success: { status: 200, description: 'A page of members and their roles, and the cursor of the next page (null after the last).', schema: 'MemberList' }, errors: [...OWNER, 'INVALID_QUERY'], query: PAGE_QUERY },
  { method: 'put', path: '/api/{username}/{projectSlug}/members/{member}', tag: 'Projects', summary: 'Add a member or change their role', description: 'viewer reads; editor reads and changes content.', auth: 'session', body: { name: 'MemberRole', schema: memberBody }, success: { status: 200, description: 'The member.', schema: 'Member' }, errors: [...OWNER, ...JSON_BODY] },
  { method: 'delete', path: '/api/{username}/{projectSlug}/members/{member}', tag: 'Projects', summary: 'Remove a member', description: 'Their live subscriptions to the project end.', auth: 'session', success: { status: 200, description: 'Removed.', schema: 'Message' }, errors: [...OWNER, 'MEMBER_NOT_FOUND'] },
  // Content schema
  { method: 'put', path: SCHEMA, tag: 'Content schema', summary: 'Set the project\'s JSON Schema', description: 'The body is a JSON Schema (draft 2020-12), kept self-contained: remote `$ref`s are never fetched (400). Refused with 409 `SCHEMA_VIOLATION` and its `errors` when the current content breaks it. Every later write whose result breaks it is 422. Content and version do not change.', auth: 'session', body: { name: 'JsonSchema', schema: jsonSchemaBody, description: 'A JSON Schema, draft 2020-12.' }, success: { status: 200, description: 'Set; who set it and when.', schema: 'SchemaSet' }, errors: [...OWNER, ...JSON_BODY, 'INVALID_SCHEMA', 'SCHEMA_VIOLATION'], statuses: { SCHEMA_VIOLATION: 409 } },
  { method: 'get', path: SCHEMA, tag: 'Content schema', summary: 'The project\'s JSON Schema', description: 'Last-Modified says when it was set.', auth: 'session', success: { status: 200, description: 'The schema itself.', schema: 'JsonValue', lastModified: true }, errors: [...OWNER, 'SCHEMA_NOT_FOUND'] },
  { method: 'delete', path: SCHEMA, tag: 'Content schema', summary: 'Remove the project\'s schema', description: 'Writes are no longer checked.', auth: 'session', success: { status: 200, description: 'Removed.', schema: 'Message' }, errors: [...OWNER, 'SCHEMA_NOT_FOUND'] },
  // App users and rules (docs/rules.md)
  { method: 'put', path: AUTH, tag: 'App users and rules', summary: 'Trust the app\'s sign-in', description: '`{issuer, audience?, and exactly one of jwks | jwksUrl | hs256Secret}`. A JWKS URL follows the webhook target policy (400 `WEBHOOK_URL_FORBIDDEN`); an HS256 secret (≥ 32 bytes) is stored encrypted and never returned.', auth: 'session', body: { name: 'AppAuthRequest', schema: appAuthBody }, success: { status: 200, description: 'The setting, without a secret.', schema: 'AppAuth' }, errors: [...OWNER, ...JSON_BODY, 'INVALID_AUTH_CONFIG', 'WEBHOOK_URL_FORBIDDEN'] },
  { method: 'get', path: AUTH, tag: 'App users and rules', summary: 'The app sign-in the project trusts', auth: 'session', success: { status: 200, description: 'The setting, without a secret.', schema: 'AppAuth' }, errors: [...OWNER, 'AUTH_CONFIG_NOT_FOUND'] },
  { method: 'delete', path: AUTH, tag: 'App users and rules', summary: 'Stop trusting the app\'s sign-in', auth: 'session', success: { status: 200, description: 'Removed.', schema: 'Message' }, errors: [...OWNER, 'AUTH_CONFIG_NOT_FOUND'] },
  { method: 'put', path: RULES, tag: 'App users and rules', summary: 'Set the project\'s rules', description: '`{"rules": {…}}`: a tree mirroring the content, `$name` wildcards, `.read`/`.write` CEL expressions. At most RULES_LIMIT bytes.', auth: 'session', body: { name: 'RulesDocument', schema: z.record(z.string(), z.unknown()) }, success: { status: 200, description: 'The document as stored.', schema: 'JsonValue' }, errors: [...OWNER, ...JSON_BODY, 'INVALID_RULES'] },
  { method: 'get', path: RULES, tag: 'App users and rules', summary: 'The project\'s rules', description: 'Last-Modified says when they were set.', auth: 'session', success: { status: 200, description: 'The document.', schema: 'JsonValue', lastModified: true }, errors: [...OWNER, 'RULES_NOT_FOUND'] },
  { method: 'delete', path: RULES, tag: 'App users and rules', summary: 'Remove the project\'s rules', description: 'App users may then do nothing.', auth: 'session', success: { status: 200, description: 'Removed.', schema: 'Message' }, errors: [...OWNER, 'RULES_NOT_FOUND'] },
  { method: 'post', path: `${RULES}/check`, tag: 'App users and rules', summary: 'Simulate a read or write by the rules', description: '`{auth, op, path, value?, rules?}` → `{allowed, rule?}`, `rule` naming the deciding rule (`users.$uid/.write`). With `rules`, that document decides instead of the saved one (not stored).', auth: 'session', body: { name: 'RulesCheckRequest', schema: rulesCheckBody }, success: { status: 200, description: '`{allowed, rule?}`.', schema: 'RulesCheckResult' }, errors: [...OWNER, ...JSON_BODY, 'INVALID_PATH', 'INVALID_RULES'] },
  // Webhooks (docs/webhooks.md)
  { method: 'post', path: '/api/{username}/{projectSlug}/webhooks', tag: 'Webhooks', summary: 'Add a webhook', description: 'Every later change matching `paths` and `ops` is POSTed, signed (Standard Webhooks), in version order, at least once. The secret is in this response only. At most MAX_WEBHOOKS_PER_PROJECT (default 20) per project. Targets on addresses that are not globally reachable (loopback, private, link-local, CGNAT, metadata, documentation, IPv4-mapped or -translated, NAT64 local-use: every range of the IANA special-purpose registries), and http:, are refused unless WEBHOOK_ALLOW_PRIVATE=true.', auth: 'session', body: { name: 'NewWebhookRequest', schema: webhookBody }, success: { status: 201, description: 'The webhook, with its secret.', schema: 'NewWebhook' }, errors: [...OWNER, ...JSON_BODY, 'WEBHOOK_URL_FORBIDDEN', 'QUOTA_EXCEEDED'] },
  { method: 'get', path: '/api/{username}/{projectSlug}/webhooks', tag: 'Webhooks', summary: "List the project's webhooks", description: 'Without secrets; a disabled webhook says why. One page at a time, oldest first.', auth: 'session', success: { status: 200, description: 'A page of webhooks, and the cursor of the next page (null after the last).', schema: 'WebhookList' }, errors: [...OWNER, 'INVALID_QUERY'], query: PAGE_QUERY },
  { method: 'delete', path: '/api/{username}/{projectSlug}/webhooks/{id}', tag: 'Webhooks', summary: 'Delete a webhook', auth: 'session', success: { status: 200, description: 'Deleted.', schema: 'Message' }, errors: [...OWNER, 'WEBHOOK_NOT_FOUND'] },
  { method: 'get', path: '/api/{username}/{projectSlug}/webhooks/{id}/deliveries', tag: 'Webhooks', summary: 'The last 100 delivery attempts', auth: 'session', success: { status: 200, description: 'Newest first.', schema: 'DeliveryList' }, errors: [...OWNER, 'WEBHOOK_NOT_FOUND'] },
  { method: 'post', path: '/api/{username}/{projectSlug}/webhooks/{id}/test', tag: 'Webhooks', summary: 'Send a signed ping now', description: 'Body `{type: "ping", webhook, project, at}`, outside the change order; the answer says how the receiver answered.', auth: 'session', success: { status: 200, description: 'How the ping went.', schema: 'PingResult' }, errors: [...OWNER, 'WEBHOOK_NOT_FOUND'] },
  // API keys
  { method: 'post', path: '/api/keys', tag: 'API keys', summary: 'Create an API key', description: 'The secret is in this response only; the server keeps its SHA-256. Rights = your rights ∩ permission ∩ projects.', auth: 'session', body: { name: 'NewApiKey', schema: apiKeyBody }, success: { status: 201, description: 'The key, with its secret.', schema: 'NewApiKey' }, errors: [...JSON_BODY, 'INVALID_PATH', 'SESSION_REQUIRED', 'QUOTA_EXCEEDED', 'USER_NOT_FOUND', 'PROJECT_NOT_FOUND', 'FORBIDDEN'] },
  { method: 'get', path: '/api/keys', tag: 'API keys', summary: 'List your API keys (without secrets)', description: 'One page at a time, oldest first.', auth: 'session', success: { status: 200, description: 'A page of keys, and the cursor of the next page (null after the last).', schema: 'ApiKeyList' }, errors: ['SESSION_REQUIRED', 'INVALID_QUERY'], query: PAGE_QUERY },
  { method: 'delete', path: '/api/keys/{id}', tag: 'API keys', summary: 'Revoke an API key', description: 'It stops working at once, and its live subscriptions end.', auth: 'session', success: { status: 200, description: 'Revoked.', schema: 'Message' }, errors: ['SESSION_REQUIRED', 'KEY_NOT_FOUND'] },
  // Content
  { method: 'get', path: CONTENT, tag: 'Content', summary: 'Read the content, or the value at a path, now or at a past version', auth: 'any', success: { status: 200, description: 'The whole content (a JSON object), or with `path` the value stored there; with `version`, as it was at that version. ETag is the version.', schema: 'JsonValue', etag: true }, description: 'Without `path`, or with `version`, a key narrowed to paths or operations is 403 `KEY_SCOPE_DENIED`; with `path` alone, it may read at or below its paths.', errors: [...READ, 'KEY_SCOPE_DENIED', 'INVALID_PATH', 'INVALID_ARRAY_INDEX', 'PATH_NOT_FOUND', 'INVALID_VERSION', 'VERSION_NOT_FOUND', 'HISTORY_EXPIRED', 'PRECONDITION_FAILED', 'INVALID_QUERY', 'RULES_DENIED', 'INVALID_TOKEN'], query: [{ name: 'path', description: 'Dot path, e.g. `stats.visits` or `items.0.title`' }, ...QUERY_PARAMS, { name: 'version', description: 'A past version (canonical non-negative integer): the content as it was then. 404 above the current version, 410 older than the history kept (HISTORY_LIMIT).', schema: VERSION }], headers: READ_CONDITIONS, notModified: true },
  { method: 'get', path: `${CONTENT}/changes`, tag: 'Content', summary: 'The change log: changes after a version', description: `Entries with a version above \`since\`, ascending, at most \`limit\` and at most CHANGES_PAGE_BYTES of them (UTF-8 JSON; a larger entry comes alone); \`more\` says whether more follow. \`since\` is answerable while every version after it is kept (HISTORY_LIMIT, default 10000 per project); older is 410, above the current version 400. ETag is the current version. A narrowed key is 403 \`KEY_SCOPE_DENIED\`. With \`path\` (docs/design.md §15): only the changes that touch the path, each as a path subscription is sent it (a change above the path becomes a \`set\`/\`delete\` of its new value with \`projected: true\`), found through the path index; a key narrowed to paths may ask at or below them. An app user (docs/design.md §17) needs \`.read\` at the path (the root without one): 403 \`RULES_DENIED\` with \`path\`.`, auth: 'any', success: { status: 200, description: '`{version, changes, more}`', schema: 'ChangesPage', etag: true }, errors: [...READ, 'KEY_SCOPE_DENIED', 'INVALID_VERSION', 'INVALID_BODY', 'INVALID_PATH', 'HISTORY_EXPIRED', 'PRECONDITION_FAILED', 'RULES_DENIED', 'INVALID_TOKEN'], query: [{ name: 'path', description: 'Dot path: only the changes that touch it (docs/design.md §15)' }, { name: 'since', description: 'A version (canonical non-negative integer), default 0', schema: { ...VERSION, default: 0 } }, { name: 'limit', description: `1 to ${CHANGES_PAGE_MAX}, default ${CHANGES_PAGE_DEFAULT}`, schema: { type: 'integer', minimum: 1, maximum: CHANGES_PAGE_MAX, default: CHANGES_PAGE_DEFAULT } }], headers: READ_CONDITIONS, notModified: true },
  { method: 'get', path: `${CONTENT}/events`, tag: 'Content', summary: 'Server-Sent Events: the changes as they happen, resumable', description: 'A `text/event-stream`. Each change is `id: <version>`, `event: change`, `data: <change entry JSON>` (the entries of `/changes`). With `Last-Event-ID: V` (or `?since=V`; the header wins) it first replays every retained change after V, then goes live, with no gap and no duplicate; with neither it starts with `event: snapshot`, `id: <version>`, `data: {version, content}`. A comment line every 15 s (SSE_HEARTBEAT) keeps proxies open. When access ends (key revoked, logout, expiry, member removed, project deleted) the stream sends `event: revoked` with `data: {message, code}` and ends. A client that does not read what it is sent is disconnected once SOCKET_SEND_BUFFER bytes wait for it; it resumes with Last-Event-ID. Errors (400, 401, 403, 404, 410, and 429 `TOO_MANY_CONNECTIONS` past SOCKET_CONNECTIONS_PER_IDENTITY open streams of one user on one node) are plain JSON answers, before any event; a narrowed key is 403 `KEY_SCOPE_DENIED`; an app user (`?access_token=<JWT>`, docs/design.md §17) needs `.read` at the stream\'s path (the root without one), else 403 `RULES_DENIED` with `path`, and its stream ends with `event: revoked` when a change of the rules takes that away or its token expires.', auth: 'any', success: { status: 200, description: 'The event stream.', contentType: 'text/event-stream' }, errors: [...READ, 'KEY_SCOPE_DENIED', 'INVALID_VERSION', 'INVALID_PATH', 'HISTORY_EXPIRED', 'TOO_MANY_CONNECTIONS', 'RULES_DENIED', 'INVALID_TOKEN'], query: [{ name: 'since', description: 'Replay the changes after this version (canonical non-negative integer), then go live', schema: VERSION }, { name: 'path', description: 'Only the changes that touch this dot path (docs/design.md §15): the first event is `event: snapshot` with `data: {version, path, exists, value?}`; a change above the path comes as a `set`/`delete` of its new value with `projected: true`; 400 `INVALID_PATH`; a key narrowed to paths may stream at or below them' }], tokenInQuery: true, headers: [{ name: 'Last-Event-ID', description: 'The last version received: replay the changes after it (EventSource sends it by itself when it reconnects)' }] },
  { method: 'post', path: `${CONTENT}/revert`, tag: 'Content', summary: 'Make the content what it was at a version', description: `One new change (\`op: "revert"\`, with \`revertedTo\`); history itself is unchanged. A narrowed key is 403 \`KEY_SCOPE_DENIED\`. ${CHECKED} Success: \`{"message":"Content reverted to version N."}\``, auth: 'any', body: { name: 'Revert', schema: revertBody }, success: { status: 200, description: '`{"message":"Content reverted to version N."}`', schema: 'Message', etag: true }, errors: [...READ, ...JSON_BODY, 'INVALID_VERSION', 'PRECONDITION_FAILED', 'VERSION_NOT_FOUND', 'HISTORY_EXPIRED', 'CONTENT_TOO_LARGE', 'KEY_SCOPE_DENIED', 'SCHEMA_VIOLATION', 'RULES_DENIED', ...IDEMPOTENT], headers: [IF_MATCH, IF_NONE_MATCH, IDEMPOTENCY_KEY] },
  { method: 'post', path: CONTENT, tag: 'Content', summary: 'Replace the whole content', description: `The body is the new content and must be a JSON object (any members: it is content, not a request schema). A narrowed key is 403 \`KEY_SCOPE_DENIED\`. ${CHECKED} Success: ${messageBody(UPDATE_MESSAGE)}`, auth: 'any', body: { name: 'Content', schema: contentBody, description: 'The new content (a JSON object).' }, success: { status: 200, description: messageBody(UPDATE_MESSAGE), schema: 'Message', etag: true }, errors: [...WRITE, 'INVALID_VALUE', ...IDEMPOTENT], headers: [IF_MATCH, IF_NONE_MATCH, IDEMPOTENCY_KEY] },
  ...PATH_OPERATION_NAMES.map(op => pathOperation(op, PATH_OPERATION_DOCS[op])),
  { method: 'post', path: `${CONTENT}/batch`, tag: 'Content', summary: 'Apply several operations atomically', description: `The path operations plus \`test\` (\`{op: "test", path, value}\`: deep equality), applied in order to one working copy: all or nothing, one new version, one change (\`op: "batch"\` with \`operations\`). A failure answers the first failing operation's status and code with \`operation\`: its index; a failed test is 409 TEST_FAILED. A narrowed key needs every operation allowed (a \`test\` is a read at its path): 403 \`KEY_SCOPE_DENIED\` with \`operation\` otherwise. With a project schema, a result that breaks it is 422 \`SCHEMA_VIOLATION\` for the batch as a whole (\`errors\`, no \`operation\`), and nothing changes. Success: \`{"message":"${BATCH_MESSAGE}","version":V}\``, auth: 'any', body: { name: 'Batch', schema: batchBodySchema }, success: { status: 200, description: `\`{"message":"${BATCH_MESSAGE}","version":V}\``, schema: 'Applied', etag: true }, errors: [...WRITE, 'INVALID_VALUE', 'NOT_A_NUMBER', 'NOT_AN_ARRAY', 'INDEX_OUT_OF_RANGE', 'NON_FINITE_RESULT', 'TEST_FAILED', ...IDEMPOTENT], headers: [IF_MATCH, IF_NONE_MATCH, IDEMPOTENCY_KEY] },
  { method: 'patch', path: CONTENT, tag: 'Content', summary: 'Apply an RFC 6902 JSON Patch atomically', description: `\`Content-Type: ${PATCH_MEDIA_TYPE}\` only (anything else is 415). RFC 6902 semantics; JSON Pointer segments follow the key rules; the root pointer is refused (use update). One change (\`op: "patch"\`). Failures name the operation with \`operation\`; a failed test is 409 TEST_FAILED. A patch writes the whole content: a narrowed key is 403 \`KEY_SCOPE_DENIED\`. ${CHECKED} Success: \`{"message":"${PATCH_MESSAGE}","version":V}\``, auth: 'any', body: { name: 'JsonPatch', schema: patchBodySchema, contentType: PATCH_MEDIA_TYPE }, success: { status: 200, description: `\`{"message":"${PATCH_MESSAGE}","version":V}\``, schema: 'Applied', etag: true }, errors: [...WRITE, 'INVALID_VALUE', 'INVALID_PATCH', 'INDEX_OUT_OF_RANGE', 'TEST_FAILED', 'UNSUPPORTED_MEDIA_TYPE', ...IDEMPOTENT], headers: [IF_MATCH, IF_NONE_MATCH, IDEMPOTENCY_KEY] },
  // Operations
  { method: 'get', path: '/healthz', tag: 'Operations', summary: 'Liveness: 200 when the store answers', auth: 'none', success: { status: 200, description: 'Healthy.', schema: 'Health' }, errors: ['STORE_UNAVAILABLE'] },
  { method: 'get', path: '/readyz', tag: 'Operations', summary: 'Readiness: the store (and Redis, when configured) answer', auth: 'none', success: { status: 200, description: 'Ready.', schema: 'Ready' }, errors: ['STORE_UNAVAILABLE'] },
  { method: 'get', path: '/metrics', tag: 'Operations', summary: 'Prometheus metrics', description: 'Needs `Authorization: Bearer <METRICS_TOKEN>`; with no METRICS_TOKEN configured it answers 401 to everyone. METRICS=open serves it without credentials; METRICS=off removes it.', auth: 'metrics', success: { status: 200, description: 'Prometheus text format.', contentType: 'text/plain' }, errors: [] },
  { method: 'get', path: '/openapi.json', tag: 'Reference', summary: 'This OpenAPI 3.1 document', auth: 'none', success: { status: 200, description: 'The API reference, generated from the request schemas.', schema: 'OpenApiDocument' }, errors: [] },
  { method: 'get', path: '/docs', tag: 'Reference', summary: 'Interactive API reference page', auth: 'none', success: { status: 200, description: 'Swagger UI rendering /openapi.json, with "Try it out".', contentType: 'text/html' }, errors: [] },
  { method: 'get', path: '/docs/assets/{file}', tag: 'Reference', summary: 'Scripts, stylesheet and icon of the reference page', description: 'Swagger UI from the installed swagger-ui-dist package (`swagger-ui-bundle.js`, `swagger-ui.css`, `favicon-32x32.png`) and the script that starts it (`contentd-docs.js`); any other name is 404.', auth: 'none', success: { status: 200, description: 'The file.', contentType: ['text/javascript', 'text/css', 'image/png'] }, errors: ['NOT_FOUND'] }
]
