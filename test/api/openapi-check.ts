// The OpenAPI document checked by construction: every answer an API test gets through
// `call` (test/support/http.ts) is checked against the server's own /openapi.json, so the
// document cannot drift from what the server does without a test failing.
// - the document itself is valid OpenAPI (@seriousme/openapi-schema-validator, an independent
//   validator of the OpenAPI meta-schemas), checked once per server;
// - the request's path and method find their operation (literal segments before parameters,
//   as OpenAPI matches), and the answer's status is one the operation lists (a method the path
//   does not serve: the shared MethodNotAllowed response; a URL no path matches: 404);
// - the body has a media type the response lists, and a JSON body matches its schema (Ajv,
//   draft 2020-12, the dialect of OpenAPI 3.1);
// - each contentd-specific header of the answer is declared on the response, and its value
//   matches the declared schema.
import { Validator } from '@seriousme/openapi-schema-validator'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { afterAll, beforeAll } from 'vitest'
import { observeResponses, type CallResult } from '../support/http.js'

type Json = any

/** Headers contentd sets on purpose: each must be declared where it is sent. */
const API_HEADERS = ['etag', 'last-modified', 'idempotent-replayed', 'x-request-id', 'retry-after', 'www-authenticate', 'allow']
const METHODS = new Set(['get', 'post', 'put', 'delete', 'patch'])
const DOCUMENT_ID = 'https://contentd.invalid/openapi.json'

interface CheckedDocument { document: Json, ajv: InstanceType<typeof Ajv2020> }
const documents = new Map<string, Promise<CheckedDocument>>()

async function load (base: string): Promise<CheckedDocument> {
  const response = await fetch(`${base}/openapi.json`)
  if (response.status !== 200) throw new Error(`openapi-check: GET /openapi.json answered ${response.status}`)
  const document = await response.json() as Json
  const validator = new Validator()
  const result = await validator.validate(structuredClone(document))
  if (!result.valid) throw new Error(`openapi-check: /openapi.json is not valid OpenAPI ${document.openapi}: ${JSON.stringify(result.errors, null, 2).slice(0, 4000)}`)
  // strict: false because the document is added whole (its "paths", "info"… are not schema keywords).
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats.default(ajv)
  ajv.addSchema({ ...document, $id: DOCUMENT_ID })
  return { document, ajv }
}

const pointer = (...parts: string[]) => parts.map(p => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')

/** The path template of the document a concrete path is served by: literal segments win over parameters. */
export function matchPath (templates: string[], path: string): string | undefined {
  // A segment that is not valid percent-encoding has no value for a parameter to take.
  const decode = (segment: string) => { try { return decodeURIComponent(segment) } catch { return undefined } }
  const segments = path.split('/').slice(1).map(decode)
  let best: { template: string, score: number[] } | undefined
  for (const template of templates) {
    const parts = template.split('/').slice(1)
    if (parts.length !== segments.length) continue
    const score: number[] = []
    let matches = true
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i] as string
      const segment = segments[i]
      // A path parameter is required (OpenAPI 3.1 §4.8.12.1): an empty segment gives it no value.
      if (segment !== undefined && segment !== '' && /^\{[^}]+\}$/.test(part)) score.push(0)
      // Express matches paths case-insensitively.
      else if (part.toLowerCase() === segment?.toLowerCase()) score.push(1)
      else { matches = false; break }
    }
    if (!matches) continue
    const better = !best || score.join('') > best.score.join('')
    if (better) best = { template, score }
  }
  return best?.template
}

function resolveResponse (document: Json, response: Json): { response: Json, at: string } | undefined {
  if (response?.$ref) {
    const name = (response.$ref as string).split('/').pop() as string
    return { response: document.components.responses[name], at: pointer('components', 'responses', name) }
  }
  return undefined
}

/** Every disagreement between an answer and the document, as sentences; [] when it conforms. */
export async function openApiProblems (base: string, method: string, path: string, r: CallResult): Promise<string[]> {
  let checked = documents.get(base)
  if (!checked) { checked = load(base); documents.set(base, checked) }
  const { document, ajv } = await checked
  const lower = method.toLowerCase()
  if (!METHODS.has(lower)) return [] // HEAD, OPTIONS: answered by Express and CORS for every path
  const pathname = new URL(path, 'http://x').pathname
  const template = matchPath(Object.keys(document.paths), pathname)
  const where = `${method} ${pathname} → ${r.status}`
  const problems: string[] = []

  let response: Json
  let at: string
  const item = template ? document.paths[template] : undefined
  const operation = item?.[lower]
  if (!template) {
    if (r.status !== 404) return [`${where}: no path of the document matches, yet the answer is not 404`]
    response = { headers: { 'X-Request-Id': { $ref: '#/components/headers/XRequestId' } }, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } }
    at = ''
  } else if (!operation) {
    if (r.status !== 405) return [`${where}: ${template} lists no ${lower} operation, yet the answer is not 405`]
    response = document.components.responses.MethodNotAllowed
    at = pointer('components', 'responses', 'MethodNotAllowed')
  } else {
    const listed = operation.responses[String(r.status)] ?? operation.responses[`${String(r.status)[0]}XX`] ?? operation.responses.default
    if (!listed) return [`${where}: status ${r.status} is not listed by ${lower} ${template} (lists ${Object.keys(operation.responses).join(', ')})`]
    const key = String(r.status) in operation.responses ? String(r.status) : `${String(r.status)[0]}XX` in operation.responses ? `${String(r.status)[0]}XX` : 'default'
    const viaRef = resolveResponse(document, listed)
    response = viaRef?.response ?? listed
    at = viaRef?.at ?? pointer('paths', template, lower, 'responses', key)
  }

  // Body: a listed media type, and a JSON body that matches its schema.
  const mediaType = (r.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? ''
  const content = response.content as Record<string, Json> | undefined
  if (r.text.length > 0 || (content && r.status !== 304)) {
    if (!content) problems.push(`${where}: a body (${mediaType}) where the response lists none`)
    else if (!(mediaType in content)) problems.push(`${where}: media type ${mediaType || '(none)'} is not one of ${Object.keys(content).join(', ')}`)
    else if (/json$/.test(mediaType)) {
      const schemaAt = at === '' ? undefined : `${DOCUMENT_ID}#/${at}/content/${pointer(mediaType)}/schema`
      const validate = schemaAt ? ajv.getSchema(schemaAt) : ajv.compile({ $ref: `${DOCUMENT_ID}#/components/schemas/Error` })
      if (!validate) problems.push(`${where}: no schema at ${schemaAt}`)
      else {
        let body: unknown
        try { body = JSON.parse(r.text) } catch { problems.push(`${where}: ${mediaType} body is not JSON`) }
        if (body !== undefined && !validate(body)) problems.push(`${where}: body ${r.text.slice(0, 300)} breaks the schema: ${ajv.errorsText(validate.errors)}`)
      }
    }
  }

  // Headers: contentd's own are declared, with values that match; required ones are sent.
  const declared = Object.fromEntries(Object.entries((response.headers ?? {}) as Record<string, Json>).map(([name, header]) => {
    const resolved = header.$ref ? document.components.headers[(header.$ref as string).split('/').pop() as string] : header
    return [name.toLowerCase(), resolved]
  }))
  for (const name of API_HEADERS) {
    const value = r.headers.get(name)
    if (value === null) continue
    const header = declared[name]
    if (!header) { problems.push(`${where}: header ${name} is sent but not declared`); continue }
    if (header.schema) {
      const schema = header.schema.type === 'integer' ? { ...header.schema, type: 'string', pattern: '^[0-9]+$' } : header.schema
      if (!ajv.validate(schema, value)) problems.push(`${where}: header ${name}: ${value} breaks its schema ${JSON.stringify(header.schema)}`)
    }
  }
  for (const [name, header] of Object.entries(declared)) {
    if (header.required && r.headers.get(name) === null) problems.push(`${where}: required header ${name} is missing`)
  }
  return problems
}

/** Checks every answer `call` gets in this test file against the server's /openapi.json; a mismatch fails the call. */
export function checkEveryResponseAgainstOpenApi (): void {
  let stop = () => {}
  beforeAll(() => {
    stop = observeResponses(async ({ base, method, path }, r) => {
      const problems = await openApiProblems(base, method, path, r)
      if (problems.length > 0) throw new Error(`the answer does not match /openapi.json:\n${problems.join('\n')}`)
    })
  })
  afterAll(() => { stop() })
}
