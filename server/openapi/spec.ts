// The OpenAPI 3.1 document of the routes a server registered (server/http/route-table.ts),
// described by the documentation table (operations.ts), the request schemas the routes
// validate with (shared/schemas.ts) and the error catalogue (shared/errors.ts). Nothing here
// is written by hand twice: change a route, a schema or a code and the reference follows.
import { z } from 'zod'
import { ERRORS, type ErrorCode } from '../../shared/errors.js'
import { SLUG, USERNAME } from '../../shared/schemas.js'
import type { RegisteredRoute } from '../http/route-table.js'
import { API_OPERATIONS, type ApiOperation } from './operations.js'
import { RESPONSE_SCHEMAS } from '../../shared/api/index.js'

type JsonSchema = Record<string, unknown>
const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` })

/**
 * A path parameter's description and schema. The username's pattern requires the "@", so
 * no tool matches /api/auth/signup to /api/{username}/{projectSlug} (400 INVALID_USERNAME
 * is still listed: the server answers it for a username without "@").
 */
function pathParameter (name: string, path: string): { description: string, schema: JsonSchema } {
  switch (name) {
    case 'username': return { description: 'The owner, with "@": `@alice` (400 INVALID_USERNAME without it)', schema: { type: 'string', pattern: USERNAME.source.replace('^@?', '^@') } }
    case 'projectSlug': return { description: `The project slug: \`${SLUG.source}\``, schema: { type: 'string', pattern: SLUG.source } }
    case 'member': return { description: 'The member\'s username, with or without "@"', schema: { type: 'string', pattern: USERNAME.source } }
    case 'id': return path.includes('/webhooks/')
      ? { description: 'The webhook id (`whk_…`) from GET /api/{username}/{projectSlug}/webhooks', schema: { type: 'string' } }
      : { description: 'The key id (`key_…`) from GET /api/keys', schema: { type: 'string' } }
    default: return { description: name, schema: { type: 'string' } }
  }
}

// Response headers, declared once under components.headers and referenced where they are sent.
const HEADERS = {
  XRequestId: { description: 'The request\'s id, as in the server log: the caller\'s own X-Request-Id when it is a sane token, otherwise a new one.', schema: { type: 'string' } },
  ETag: { description: 'The content version, e.g. "7"', schema: { type: 'string', pattern: '^"[0-9]+"$' } },
  IdempotentReplayed: { description: '`true` when this is the kept answer of an earlier request with the same Idempotency-Key: nothing was applied again.', schema: { type: 'string', enum: ['true'] } },
  LastModified: { description: 'When the schema was set (HTTP date)', schema: { type: 'string' } }
}
const header = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` })
/** Every response carries X-Request-Id; an idempotent operation's may be a replay. */
const commonHeaders = (op: ApiOperation): Record<string, unknown> => ({
  'X-Request-Id': header('XRequestId'),
  ...(op.headers?.some(h => h.name === 'Idempotency-Key') ? { 'Idempotent-Replayed': header('IdempotentReplayed') } : {})
})

const DESCRIPTION = `contentd stores one JSON document per project and changes values inside it with dot-path operations; changes are broadcast over Socket.IO (see the realtime protocol in the docs).

Authenticate with \`Authorization: Bearer <token>\`: a session token (\`cds_…\`, from signup or login) or an API key (\`cdk_…\`). Every error body is \`{"message", "code"}\` with a code from the catalogue below; an unknown endpoint is 404 \`NOT_FOUND\`, and a path below with a method it does not list is 405 \`METHOD_NOT_ALLOWED\` with an \`Allow\` header naming the methods it serves (before authentication: whoever calls). A request body with a member its schema does not name is 400 \`INVALID_BODY\` naming it (the whole content of an update excepted: it is content).

| code | status | message |
|---|---|---|
${(Object.keys(ERRORS) as ErrorCode[]).map(code => `| ${code} | ${ERRORS[code].status} | ${ERRORS[code].message} |`).join('\n')}`

/** Request body component name: "Credentials" → "CredentialsBody". */
const bodyName = (name: string) => name.endsWith('Body') ? name : `${name}Body`

function componentSchemas (operations: ApiOperation[]): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>()
  for (const [id, schema] of Object.entries(RESPONSE_SCHEMAS)) registry.add(schema, { id })
  for (const op of operations) {
    if (op.body && !registry.has(op.body.schema)) registry.add(op.body.schema, { id: bodyName(op.body.name) })
  }
  // Request schemas transform their input (paths are parsed); the reference describes what
  // a client sends, so it is generated from the input side.
  const { schemas } = z.toJSONSchema(registry, { io: 'input', target: 'draft-2020-12', unrepresentable: 'any', uri: id => `#/components/schemas/${id}` })
  const out: Record<string, JsonSchema> = {}
  for (const [id, schema] of Object.entries(schemas)) {
    const { $schema: _schema, $id: _id, id: _legacyId, ...rest } = schema as JsonSchema
    out[id] = rest
  }
  return out
}

/** The codes an operation can answer, beyond its own list: authentication, rate limits, 500. */
function allErrors (op: ApiOperation): ErrorCode[] {
  const codes = new Set<ErrorCode>()
  if (op.auth !== 'none') { codes.add('AUTH_REQUIRED'); codes.add('INVALID_TOKEN') }
  for (const code of op.errors) codes.add(code)
  if (op.path.startsWith('/api/')) codes.add('RATE_LIMITED')
  codes.add('INTERNAL_ERROR')
  return [...codes]
}

function errorResponses (op: ApiOperation): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>()
  for (const code of allErrors(op)) {
    const status = op.statuses?.[code] ?? ERRORS[code].status
    byStatus.set(status, [...(byStatus.get(status) ?? []), code])
  }
  const responses: Record<string, unknown> = {}
  for (const [status, codes] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    const headers: Record<string, unknown> = commonHeaders(op)
    if (status === 401) headers['WWW-Authenticate'] = { description: 'Bearer', schema: { type: 'string' } }
    if (status === 429) headers['Retry-After'] = { description: 'Seconds to wait', schema: { type: 'integer' } }
    responses[String(status)] = {
      description: codes.map(code => `\`${code}\`: ${ERRORS[code].message}`).join('; '),
      headers,
      content: { 'application/json': { schema: { allOf: [ref('Error'), { properties: { code: { enum: codes } } }] } } }
    }
  }
  return responses
}

function operationObject (op: ApiOperation): Record<string, unknown> {
  const parameters: unknown[] = []
  for (const [, name] of op.path.matchAll(/\{([^}]+)\}/g)) {
    parameters.push({ name, in: 'path', required: true, ...pathParameter(name as string, op.path) })
  }
  for (const q of op.query ?? []) parameters.push({ name: q.name, in: 'query', required: q.required ?? false, description: q.description, schema: q.schema ?? { type: 'string' } })
  for (const h of op.headers ?? []) parameters.push({ name: h.name, in: 'header', required: false, description: h.description, schema: { type: 'string' } })

  const success: Record<string, unknown> = {
    description: op.success.description,
    headers: { ...commonHeaders(op), ...(op.success.etag ? { ETag: header('ETag') } : {}), ...(op.success.lastModified ? { 'Last-Modified': header('LastModified') } : {}) }
  }
  if (op.success.schema) success.content = { 'application/json': { schema: ref(op.success.schema) } }
  else if (op.success.contentType) success.content = Object.fromEntries([op.success.contentType].flat().map(type => [type, { schema: { type: 'string' } }]))
  const responses: Record<string, unknown> = { [String(op.success.status)]: success }
  if (op.notModified) responses['304'] = { description: 'Not modified: the content is still at the If-None-Match version.', headers: { ...commonHeaders(op), ETag: header('ETag') } }
  Object.assign(responses, errorResponses(op))
  // A method a path does not list is 405 (the path's other methods' operations say so too).
  responses['405'] = { $ref: '#/components/responses/MethodNotAllowed' }

  return {
    operationId: operationId(op),
    tags: [op.tag],
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    security: op.auth === 'none' ? [] : [{ bearerAuth: [] }, ...(op.tokenInQuery ? [{ accessToken: [] }] : [])],
    'x-contentd-auth': op.auth,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(op.body
      ? { requestBody: { required: op.body.required ?? true, ...(op.body.description ? { description: op.body.description } : {}), content: { [op.body.contentType ?? 'application/json']: { schema: ref(bodyName(op.body.name)) } } } }
      : {}),
    responses
  }
}

/** "post /api/{username}/{projectSlug}/content/increment" → "postContentIncrement"-like ids, unique per operation. */
function operationId (op: ApiOperation): string {
  const words = op.path.replace(/\{[^}]+\}/g, '').split(/[/._-]+/).filter(w => w && w !== 'api' && w !== 'json' && w !== 'js')
  return op.method + words.map(w => w[0]?.toUpperCase() + w.slice(1)).join('') + (op.path.endsWith('}') ? 'ById' : '')
}

/** Express ":param" → OpenAPI "{param}". */
export const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')

const keyOf = (method: string, openApiPath: string) => `${method.toUpperCase()} ${openApiPath}`

/**
 * The documentation of each registered route, in the documentation table's order. A route
 * without documentation is a programming error: it throws, naming the route.
 */
export function documentedOperations (registered: readonly RegisteredRoute[]): ApiOperation[] {
  const wanted = new Set(registered.map(r => keyOf(r.method, toOpenApiPath(r.path))))
  const documented = new Set(API_OPERATIONS.map(op => keyOf(op.method, op.path)))
  const missing = [...wanted].filter(key => !documented.has(key))
  if (missing.length > 0) throw new Error(`openapi: routes without documentation in server/openapi/operations.ts: ${missing.join(', ')}`)
  return API_OPERATIONS.filter(op => wanted.has(keyOf(op.method, op.path)))
}

/** The answer to a method a path does not serve; every path can give it. */
const METHOD_NOT_ALLOWED_RESPONSE = {
  description: `\`METHOD_NOT_ALLOWED\`: ${ERRORS.METHOD_NOT_ALLOWED.message}. Answered for any method the path does not list, before authentication.`,
  headers: { Allow: { description: 'The methods the path serves, e.g. "GET, HEAD, POST"', schema: { type: 'string' } }, 'X-Request-Id': header('XRequestId') },
  content: { 'application/json': { schema: { allOf: [ref('Error'), { properties: { code: { enum: ['METHOD_NOT_ALLOWED'] } } }] } } }
}

export function buildOpenApiDocument (registered: readonly RegisteredRoute[]): Record<string, unknown> {
  const operations = documentedOperations(registered)
  const paths: Record<string, Record<string, unknown>> = {}
  for (const op of operations) {
    paths[op.path] ??= {}
    ;(paths[op.path] as Record<string, unknown>)[op.method] = operationObject(op)
  }
  return {
    openapi: '3.1.0',
    info: { title: 'contentd API', version: '1', description: DESCRIPTION, license: { name: 'MIT', identifier: 'MIT' } },
    servers: [{ url: '/' }],
    tags: [...new Set(operations.map(op => op.tag))].map(name => ({ name })),
    paths,
    components: {
      schemas: componentSchemas(operations),
      responses: { MethodNotAllowed: METHOD_NOT_ALLOWED_RESPONSE },
      headers: HEADERS,
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'Session token (cds_…) or API key (cdk_…)' },
        accessToken: { type: 'apiKey', in: 'query', name: 'access_token', description: 'The session token or API key as ?access_token=, for browsers\' EventSource, which cannot send an Authorization header (never written to logs; the header wins when both are sent). Only where an operation lists it.' }
      }
    }
  }
}
