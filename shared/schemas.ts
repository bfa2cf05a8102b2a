// Request body schemas (zod), shared by the server's routes, clients and the API reference.
// parseBody turns the first problem into a catalogued 400: a bad `path` is INVALID_PATH, a
// bad `value` INVALID_VALUE, anything else INVALID_BODY.
import { z } from 'zod'
import { ContentdError, type ErrorCode } from './errors.js'
import { parsePath } from './path.js'
import { PROJECT_REF } from './project-ref.js'

export const pathField = z.string({ error: 'path is required and must be a string' }).transform((path, ctx) => {
  try {
    return parsePath(path)
  } catch (e) {
    ctx.addIssue({ code: 'custom', message: e instanceof Error ? e.message : 'invalid path' })
    return z.NEVER
  }
})

// JSON bodies cannot hold undefined, so "undefined" here means the field was absent.
const requiredValue = z.unknown().refine(value => value !== undefined, { error: 'value is required' })
const amount = z.number({ error: 'value must be a finite number' }).optional().default(1)

export const amountBody = z.object({ path: pathField, value: amount })
export const pathBody = z.object({ path: pathField })
export const valueBody = z.object({ path: pathField, value: requiredValue })
export const insertBody = z.object({
  path: pathField,
  value: requiredValue,
  index: z.number({ error: 'index is required and must be an integer' }).int({ error: 'index must be an integer' })
})

const USERNAME = /^@?[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,37}[a-zA-Z0-9])?$/
export const usernameField = z.string({ error: 'username is required' })
  .regex(USERNAME, { error: 'username must be 1-39 letters, digits or "-", not starting or ending with "-"' })
  .transform(name => name.replace(/^@/, '').toLowerCase())

export const credentialsBody = z.object({
  username: usernameField,
  password: z.string({ error: 'password is required' }).min(8, { error: 'password must have at least 8 characters' })
    .max(1024, { error: 'password must have at most 1024 characters' })
})

export const SLUG = /^[a-z0-9][a-z0-9_-]{0,63}$/
export const projectBody = z.object({
  slug: z.string({ error: 'slug is required' }).regex(SLUG, { error: 'slug must match ^[a-z0-9][a-z0-9_-]{0,63}$' }),
  name: z.string({ error: 'name must be a string' }).trim().min(1, { error: 'name must not be empty' }).max(200, { error: 'name must have at most 200 characters' }).optional()
})

export const memberBody = z.object({
  role: z.enum(['viewer', 'editor'], { error: 'role must be "viewer" or "editor"' })
})

/** "@alice/demo" or "alice/demo". */
export const projectRefField = z.string().regex(PROJECT_REF, { error: 'projects must look like "@user/slug"' })

export const apiKeyBody = z.object({
  name: z.string({ error: 'name is required' }).trim().min(1, { error: 'name must not be empty' }).max(100, { error: 'name must have at most 100 characters' }),
  permission: z.enum(['read', 'write'], { error: 'permission must be "read" or "write"' }),
  projects: z.array(projectRefField).max(100).optional(),
  expiresAt: z.iso.datetime({ offset: true, error: 'expiresAt must be an ISO 8601 date-time' }).optional()
})

const CODE_BY_FIELD: Record<string, ErrorCode> = { path: 'INVALID_PATH', value: 'INVALID_VALUE' }

/** Validates a parsed JSON body; throws a ContentdError naming the first problem. */
export function parseBody<S extends z.ZodType> (schema: S, body: unknown): z.output<S> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ContentdError('INVALID_BODY', 'the body must be a JSON object')
  }
  const result = schema.safeParse(body)
  if (result.success) return result.data
  const issue = result.error.issues[0]
  const field = typeof issue?.path[0] === 'string' ? issue.path[0] : ''
  throw new ContentdError(CODE_BY_FIELD[field] ?? 'INVALID_BODY', issue?.message ?? 'invalid body')
}
