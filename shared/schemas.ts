// Request body schemas (zod), shared by the server's routes, clients and the API reference.
// Every body is a strict object: a member the schema does not name is refused (docs/design.md
// §13), so a misspelt field is an error instead of silently meaning its default.
// parseBody turns the first problem into a catalogued 400: an unknown member or a bad shape
// is INVALID_BODY, a bad `path` INVALID_PATH, a bad `value` INVALID_VALUE, a bad `version`
// INVALID_VERSION.
//
// Issue messages are details, never whole messages: ContentdError puts the catalogue text in
// front of them, once (see shared/errors.ts).
import { z } from 'zod'
import { ContentdError, isContentdError, type ErrorCode } from './errors.js'
import { NARROWABLE_OPERATIONS } from './key-scope.js'
import { parsePath } from './path.js'
import { PROJECT_REF } from './project-ref.js'

/** What a custom issue carries when a shared check (parsePath, say) refused the input. */
interface CatalogueIssueParams { code: ErrorCode }

export const pathField = z.string({ error: 'path is required and must be a string' }).transform((path, ctx) => {
  try {
    return parsePath(path)
  } catch (e) {
    if (!isContentdError(e)) throw e
    const params: CatalogueIssueParams = { code: e.code }
    ctx.addIssue({ code: 'custom', message: e.detail ?? '', params })
    return z.NEVER
  }
})

// JSON bodies cannot hold undefined, so "undefined" here means the field was absent.
const requiredValue = z.unknown().refine(value => value !== undefined, { error: 'value is required' })
const amount = z.number({ error: 'value must be a finite number' }).optional().default(1)

export const amountBody = z.strictObject({ path: pathField, value: amount })
// The spec's request body has `path` and `value` for every operation (the spec's §2 table,
// which the conformance checks follow); delete uses only the path, so a `value` sent along
// is a known member, accepted and ignored. Any other member is refused.
export const pathBody = z.strictObject({ path: pathField, value: z.unknown().optional().meta({ description: 'Ignored: delete uses only the path' }) })
export const valueBody = z.strictObject({ path: pathField, value: requiredValue })
export const insertBody = z.strictObject({
  path: pathField,
  value: requiredValue,
  index: z.number({ error: 'index is required and must be an integer' }).int({ error: 'index must be an integer' })
})

/** A version (docs/design.md §9): a non-negative integer that JavaScript represents exactly. */
export const versionField = z.number({ error: 'version is required and must be a non-negative integer' })
  .int({ error: 'version must be a non-negative integer' })
  .min(0, { error: 'version must be a non-negative integer' })
  .max(Number.MAX_SAFE_INTEGER, { error: 'version must be a non-negative integer' })

export const revertBody = z.strictObject({ version: versionField })

/** A username, with or without its "@" (docs/design.md §5). */
export const USERNAME = /^@?[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,37}[a-zA-Z0-9])?$/
export const usernameField = z.string({ error: 'username is required' })
  .regex(USERNAME, { error: 'username must be 1-39 letters, digits or "-", not starting or ending with "-"' })
  .transform(name => name.replace(/^@/, '').toLowerCase())

export const credentialsBody = z.strictObject({
  username: usernameField,
  password: z.string({ error: 'password is required' }).min(8, { error: 'password must have at least 8 characters' })
    .max(1024, { error: 'password must have at most 1024 characters' })
})

export const SLUG = /^[a-z0-9][a-z0-9_-]{0,63}$/
export const projectBody = z.strictObject({
  slug: z.string({ error: 'slug is required' }).regex(SLUG, { error: 'slug must match ^[a-z0-9][a-z0-9_-]{0,63}$' }),
  name: z.string({ error: 'name must be a string' }).trim().min(1, { error: 'name must not be empty' }).max(200, { error: 'name must have at most 200 characters' }).optional()
})

export const memberBody = z.strictObject({
  role: z.enum(['viewer', 'editor'], { error: 'role must be "viewer" or "editor"' })
})

/** "@alice/demo" or "alice/demo". */
export const projectRefField = z.string().regex(PROJECT_REF, { error: 'projects must look like "@user/slug"' })

/** A dot path kept as text (a key's narrowing), checked with the rules of every path. */
const scopePath = z.string({ error: 'paths must be dot paths (strings)' }).superRefine((path, ctx) => {
  try {
    parsePath(path)
  } catch (e) {
    if (!isContentdError(e)) throw e
    const params: CatalogueIssueParams = { code: e.code }
    ctx.addIssue({ code: 'custom', message: `paths: ${JSON.stringify(path)}: ${e.detail ?? 'is not a path'}`, params })
  }
})

export const apiKeyBody = z.strictObject({
  name: z.string({ error: 'name is required' }).trim().min(1, { error: 'name must not be empty' }).max(100, { error: 'name must have at most 100 characters' }),
  permission: z.enum(['read', 'write'], { error: 'permission must be "read" or "write"' }),
  projects: z.array(projectRefField).max(100).optional(),
  paths: z.array(scopePath, { error: 'paths must be a list of dot paths' }).min(1, { error: 'paths must list at least one path (leave it out for every path)' }).max(100, { error: 'paths must have at most 100 entries' }).optional()
    .meta({ description: 'Narrows the key to these dot paths: it writes and reads only at or below one of them, and never the whole content' }),
  ops: z.array(z.enum(NARROWABLE_OPERATIONS, { error: `ops must name operations: ${NARROWABLE_OPERATIONS.join(', ')}` }), { error: 'ops must be a list of operation names' })
    .min(1, { error: 'ops must list at least one operation (leave it out for every operation)' }).optional()
    .meta({ description: 'Narrows the key to these operations; a narrowed key never replaces the whole content' }),
  expiresAt: z.iso.datetime({ offset: true, error: 'expiresAt must be an ISO 8601 date-time' }).optional()
})

const CODE_BY_FIELD: Record<string, ErrorCode> = { path: 'INVALID_PATH', value: 'INVALID_VALUE', version: 'INVALID_VERSION' }

/** How every refused unknown member is named, in HTTP bodies and Socket.IO payloads alike (at most 64 characters of each). */
export function unknownFieldsMessage (keys: readonly string[]): string {
  return `unknown field${keys.length > 1 ? 's' : ''} ${keys.map(key => JSON.stringify(key.slice(0, 64))).join(', ')}`
}

/** The catalogued error for one zod issue: its code, and the issue's message as the detail. */
function errorFor (issue: z.core.$ZodIssue): ContentdError {
  if (issue.code === 'unrecognized_keys') {
    return new ContentdError('INVALID_BODY', unknownFieldsMessage(issue.keys))
  }
  const fromCheck = issue.code === 'custom' ? (issue.params as Partial<CatalogueIssueParams> | undefined)?.code : undefined
  const field = typeof issue.path[0] === 'string' ? issue.path[0] : ''
  return new ContentdError(fromCheck ?? CODE_BY_FIELD[field] ?? 'INVALID_BODY', issue.message)
}

/** Validates a parsed JSON body; throws a ContentdError naming the first problem. */
export function parseBody<S extends z.ZodType> (schema: S, body: unknown): z.output<S> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ContentdError('INVALID_BODY', 'the body must be a JSON object')
  }
  const result = schema.safeParse(body)
  if (result.success) return result.data
  const { issues } = result.error
  // An unknown member first: a misspelt "vlaue" explains the "value is required" after it.
  const issue = issues.find(i => i.code === 'unrecognized_keys') ?? issues[0]
  if (!issue) throw new ContentdError('INVALID_BODY')
  throw errorFor(issue)
}
