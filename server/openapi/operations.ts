// Every HTTP endpoint contentd serves, with the body schema its route validates with and
// the error codes it can answer. spec.ts turns the registered routes (server/http/
// route-table.ts) into OpenAPI 3.1 with this documentation; a test checks that it documents
// exactly the registered routes. The content operations' schemas and messages come from the
// shared operation table.
import { z } from 'zod'
import type { ErrorCode } from '../../shared/errors.js'
import { PATH_OPERATION_NAMES, PATH_OPERATIONS, UPDATE_MESSAGE, type PathOperationName } from '../../shared/operation-table.js'
import { amountBody, apiKeyBody, credentialsBody, insertBody, memberBody, pathBody, projectBody, revertBody, valueBody } from '../../shared/schemas.js'
import { webhookBody } from '../../shared/webhooks.js'
import { CHANGES_PAGE_DEFAULT, CHANGES_PAGE_MAX } from '../http/history-query.js'
import type { ResponseSchemaName } from './response-schemas.js'

/** none: public; any: session token or API key; session: session token only; metrics: METRICS_TOKEN unless METRICS=open. */
export type AuthKind = 'none' | 'any' | 'session' | 'metrics'

export interface ApiOperation {
  method: 'get' | 'post' | 'put' | 'delete'
  /** OpenAPI form: /api/{username}/{projectSlug}/content */
  path: string
  tag: string
  summary: string
  description?: string
  auth: AuthKind
  /** The zod schema the route validates its body with, and its component name. */
  body?: { name: string, schema: z.ZodType, required?: boolean, description?: string }
  success: { status: number, description: string, schema?: ResponseSchemaName, contentType?: string, etag?: boolean }
  errors: ErrorCode[]
  query?: Array<{ name: string, description: string, required?: boolean }>
  headers?: Array<{ name: string, description: string }>
  /** Answers 304 Not Modified to a matching If-None-Match. */
  notModified?: boolean
}

const JSON_BODY: ErrorCode[] = ['INVALID_JSON', 'INVALID_BODY', 'BODY_TOO_LARGE']
const PROJECT: ErrorCode[] = ['INVALID_USERNAME', 'USER_NOT_FOUND', 'PROJECT_NOT_FOUND']
const READ: ErrorCode[] = [...PROJECT, 'FORBIDDEN', 'KEY_PERMISSION_DENIED']
const OWNER: ErrorCode[] = [...PROJECT, 'FORBIDDEN', 'SESSION_REQUIRED', 'OWNER_REQUIRED']
const WRITE: ErrorCode[] = [...READ, ...JSON_BODY, 'INVALID_PATH', 'PATH_CONFLICT', 'INVALID_ARRAY_INDEX', 'PRECONDITION_FAILED', 'CONTENT_TOO_LARGE']

/** ?limit=&cursor= of the paginated lists (docs/api.md#pages). */
const PAGE_QUERY = [
  { name: 'limit', description: 'How many items, 1 to 100 (default 100).' },
  { name: 'cursor', description: 'The `nextCursor` of the previous page; absent for the first page.' }
]

const IF_MATCH = { name: 'If-Match', description: 'Apply only when the content is at this version, e.g. "7" (several may be listed, or *); otherwise 412 and nothing changes.' }
const CONTENT = '/api/{username}/{projectSlug}/content'

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
  increment: { summary: 'Add to a number', description: 'A missing target is created as `value`; a target that is not a number (null included) is 400.', errors: ['NOT_A_NUMBER', 'NON_FINITE_RESULT', 'INVALID_VALUE'] },
  decrement: { summary: 'Subtract from a number', description: 'A missing target is created as `-value`; a target that is not a number is 400.', errors: ['NOT_A_NUMBER', 'NON_FINITE_RESULT', 'INVALID_VALUE'] },
  set: { summary: 'Write a value', description: 'Creates missing intermediates as objects. On an array index: index < length replaces, index = length appends, index > length is 400.', errors: ['INVALID_VALUE', 'INDEX_OUT_OF_RANGE'] },
  delete: { summary: 'Remove a value', description: 'A missing path is a success that changes nothing. Removing an array element shifts later elements down.', errors: [] },
  push: { summary: 'Append to an array', description: 'A missing target is created as `[value]`; a target that is not an array is 400. An array value is pushed as one element.', errors: ['INVALID_VALUE', 'NOT_AN_ARRAY'] },
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
    description,
    auth: 'any',
    body: { ...names, schema },
    success: { status: 200, description: messageBody(message), schema: 'Message', etag: true },
    errors: [...WRITE, ...errors],
    headers: [IF_MATCH]
  }
}

// Update's body is free-form content: validateOperation checks it is a JSON object that
// follows the value rules of docs/design.md §3.
const contentBody = z.record(z.string(), z.unknown()).meta({ description: 'The new content: any JSON object' })

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
  // Webhooks (docs/webhooks.md)
  { method: 'post', path: '/api/{username}/{projectSlug}/webhooks', tag: 'Webhooks', summary: 'Add a webhook', description: 'Every later change matching `paths` and `ops` is POSTed, signed (Standard Webhooks), in version order, at least once. The secret is in this response only. Loopback, private, link-local, CGNAT and metadata targets, and http:, are refused unless WEBHOOK_ALLOW_PRIVATE=true.', auth: 'session', body: { name: 'NewWebhookRequest', schema: webhookBody }, success: { status: 201, description: 'The webhook, with its secret.', schema: 'NewWebhook' }, errors: [...OWNER, ...JSON_BODY, 'WEBHOOK_URL_FORBIDDEN'] },
  { method: 'get', path: '/api/{username}/{projectSlug}/webhooks', tag: 'Webhooks', summary: "List the project's webhooks", description: 'Without secrets; a disabled webhook says why.', auth: 'session', success: { status: 200, description: 'The webhooks.', schema: 'WebhookList' }, errors: OWNER },
  { method: 'delete', path: '/api/{username}/{projectSlug}/webhooks/{id}', tag: 'Webhooks', summary: 'Delete a webhook', auth: 'session', success: { status: 200, description: 'Deleted.', schema: 'Message' }, errors: [...OWNER, 'WEBHOOK_NOT_FOUND'] },
  { method: 'get', path: '/api/{username}/{projectSlug}/webhooks/{id}/deliveries', tag: 'Webhooks', summary: 'The last 100 delivery attempts', auth: 'session', success: { status: 200, description: 'Newest first.', schema: 'DeliveryList' }, errors: [...OWNER, 'WEBHOOK_NOT_FOUND'] },
  { method: 'post', path: '/api/{username}/{projectSlug}/webhooks/{id}/test', tag: 'Webhooks', summary: 'Send a signed ping now', description: 'Body `{type: "ping", webhook, project, at}`, outside the change order; the answer says how the receiver answered.', auth: 'session', success: { status: 200, description: 'How the ping went.', schema: 'PingResult' }, errors: [...OWNER, 'WEBHOOK_NOT_FOUND'] },
  // API keys
  { method: 'post', path: '/api/keys', tag: 'API keys', summary: 'Create an API key', description: 'The secret is in this response only; the server keeps its SHA-256. Rights = your rights ∩ permission ∩ projects.', auth: 'session', body: { name: 'NewApiKey', schema: apiKeyBody }, success: { status: 201, description: 'The key, with its secret.', schema: 'NewApiKey' }, errors: [...JSON_BODY, 'SESSION_REQUIRED', 'QUOTA_EXCEEDED', 'USER_NOT_FOUND', 'PROJECT_NOT_FOUND', 'FORBIDDEN'] },
  { method: 'get', path: '/api/keys', tag: 'API keys', summary: 'List your API keys (without secrets)', description: 'One page at a time, oldest first.', auth: 'session', success: { status: 200, description: 'A page of keys, and the cursor of the next page (null after the last).', schema: 'ApiKeyList' }, errors: ['SESSION_REQUIRED', 'INVALID_QUERY'], query: PAGE_QUERY },
  { method: 'delete', path: '/api/keys/{id}', tag: 'API keys', summary: 'Revoke an API key', description: 'It stops working at once, and its live subscriptions end.', auth: 'session', success: { status: 200, description: 'Revoked.', schema: 'Message' }, errors: ['SESSION_REQUIRED', 'KEY_NOT_FOUND'] },
  // Content
  { method: 'get', path: CONTENT, tag: 'Content', summary: 'Read the content, or the value at a path, now or at a past version', auth: 'any', success: { status: 200, description: 'The whole content (a JSON object), or with `path` the value stored there; with `version`, as it was at that version. ETag is the version.', schema: 'JsonValue', etag: true }, errors: [...READ, 'INVALID_PATH', 'INVALID_ARRAY_INDEX', 'PATH_NOT_FOUND', 'INVALID_VERSION', 'VERSION_NOT_FOUND', 'HISTORY_EXPIRED'], query: [{ name: 'path', description: 'Dot path, e.g. `stats.visits` or `items.0.title`' }, { name: 'version', description: 'A past version (canonical non-negative integer): the content as it was then. 404 above the current version, 410 older than the history kept (HISTORY_LIMIT).' }], headers: [{ name: 'If-None-Match', description: 'A version, e.g. "7": 304 when the content is still at it.' }], notModified: true },
  { method: 'get', path: `${CONTENT}/changes`, tag: 'Content', summary: 'The change log: changes after a version', description: `Entries with a version above \`since\`, ascending, at most \`limit\`; \`more\` says whether more follow. \`since\` is answerable while every version after it is kept (HISTORY_LIMIT, default 10000 per project); older is 410, above the current version 400. ETag is the current version.`, auth: 'any', success: { status: 200, description: '`{version, changes, more}`', schema: 'ChangesPage', etag: true }, errors: [...READ, 'INVALID_VERSION', 'INVALID_BODY', 'HISTORY_EXPIRED'], query: [{ name: 'since', description: 'A version (canonical non-negative integer), default 0' }, { name: 'limit', description: `1 to ${CHANGES_PAGE_MAX}, default ${CHANGES_PAGE_DEFAULT}` }] },
  { method: 'post', path: `${CONTENT}/revert`, tag: 'Content', summary: 'Make the content what it was at a version', description: 'One new change (`op: "revert"`, with `revertedTo`); history itself is unchanged. Success: `{"message":"Content reverted to version N."}`', auth: 'any', body: { name: 'Revert', schema: revertBody }, success: { status: 200, description: '`{"message":"Content reverted to version N."}`', schema: 'Message', etag: true }, errors: [...READ, ...JSON_BODY, 'INVALID_VERSION', 'PRECONDITION_FAILED', 'VERSION_NOT_FOUND', 'HISTORY_EXPIRED', 'CONTENT_TOO_LARGE'], headers: [IF_MATCH] },
  { method: 'post', path: CONTENT, tag: 'Content', summary: 'Replace the whole content', description: `The body is the new content and must be a JSON object (any members: it is content, not a request schema). Success: ${messageBody(UPDATE_MESSAGE)}`, auth: 'any', body: { name: 'Content', schema: contentBody, description: 'The new content (a JSON object).' }, success: { status: 200, description: messageBody(UPDATE_MESSAGE), schema: 'Message', etag: true }, errors: [...WRITE, 'INVALID_VALUE'], headers: [IF_MATCH] },
  ...PATH_OPERATION_NAMES.map(op => pathOperation(op, PATH_OPERATION_DOCS[op])),
  // Operations
  { method: 'get', path: '/healthz', tag: 'Operations', summary: 'Liveness: 200 when the store answers', auth: 'none', success: { status: 200, description: 'Healthy.', schema: 'Health' }, errors: ['STORE_UNAVAILABLE'] },
  { method: 'get', path: '/readyz', tag: 'Operations', summary: 'Readiness: the store (and Redis, when configured) answer', auth: 'none', success: { status: 200, description: 'Ready.', schema: 'Ready' }, errors: ['STORE_UNAVAILABLE'] },
  { method: 'get', path: '/metrics', tag: 'Operations', summary: 'Prometheus metrics', description: 'Needs `Authorization: Bearer <METRICS_TOKEN>`; with no METRICS_TOKEN configured it answers 401 to everyone. METRICS=open serves it without credentials; METRICS=off removes it.', auth: 'metrics', success: { status: 200, description: 'Prometheus text format.', contentType: 'text/plain' }, errors: [] },
  { method: 'get', path: '/openapi.json', tag: 'Reference', summary: 'This OpenAPI 3.1 document', auth: 'none', success: { status: 200, description: 'The API reference, generated from the request schemas.', contentType: 'application/json' }, errors: [] },
  { method: 'get', path: '/docs', tag: 'Reference', summary: 'Interactive API reference page', auth: 'none', success: { status: 200, description: 'An HTML page rendering /openapi.json.', contentType: 'text/html' }, errors: [] },
  { method: 'get', path: '/docs/reference.js', tag: 'Reference', summary: 'Script of the reference page', auth: 'none', success: { status: 200, description: 'JavaScript.', contentType: 'text/javascript' }, errors: [] }
]
