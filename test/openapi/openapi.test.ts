// The API reference: every route the app registers is documented (and nothing else), the
// registered routes are the ones Express serves (each path answers its methods, and 405 with
// the table's Allow to others), request bodies are the very schemas the routes validate with,
// error responses use the catalogue, and the /docs page loads without inline scripts.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { allowHeader, RouteTable } from '../../server/http/route-table.js'
import { API_OPERATIONS } from '../../server/openapi/operations.js'
import { toOpenApiPath } from '../../server/openapi/spec.js'
import { ERRORS } from '../../shared/errors.js'
import { PATH_OPERATION_NAMES, PATH_OPERATIONS } from '../../shared/operation-table.js'
import { apiKeyBody } from '../../shared/schemas.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { matchPath, openApiProblems } from '../api/openapi-check.js'

const METHODS = ['get', 'post', 'put', 'delete', 'patch']
let app: TestApp
let spec: any

beforeAll(async () => {
  app = await startTestApp()
  const response = await fetch(`${app.url}/openapi.json`)
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toMatch(/^application\/json/)
  spec = await response.json()
})

afterAll(async () => { await app.close() })

const documented = (): string[] => Object.entries(spec.paths as Record<string, Record<string, unknown>>)
  .flatMap(([path, item]) => Object.keys(item).filter(m => METHODS.includes(m)).map(m => `${m.toUpperCase()} ${path}`)).sort()

const registeredOf = (test: TestApp): string[] => RouteTable.of(test.app).routes.map(r => `${r.method.toUpperCase()} ${toOpenApiPath(r.path)}`).sort()

/** A URL for a route path: parameters filled with plausible values. */
const urlFor = (path: string) => path.replace(':username', '@nobody').replace(':file', 'swagger-ui.css').replace(/:[A-Za-z]+/g, 'x')

describe('GET /openapi.json', () => {
  it('documents exactly the routes the app registers', () => {
    // The default configuration registers every route (METRICS is on by default).
    const registered = registeredOf(app)
    expect(registered.length).toBeGreaterThan(20)
    const undocumented = registered.filter(r => !documented().includes(r))
    expect(undocumented, 'routes without documentation in server/openapi/operations.ts').toEqual([])
    const phantom = documented().filter(d => !registered.includes(d))
    expect(phantom, 'documented operations that no route serves').toEqual([])
    const table = API_OPERATIONS.map(op => `${op.method.toUpperCase()} ${op.path}`).sort()
    expect(table, 'the documentation table lists exactly the routes of a full configuration').toEqual(registered)
  })

  it('leaves out what a server does not serve: /metrics with METRICS=off', async () => {
    const quiet = await startTestApp({ METRICS: 'off' })
    try {
      const doc = await (await fetch(`${quiet.url}/openapi.json`)).json() as { paths: Record<string, unknown> }
      expect(Object.keys(doc.paths)).not.toContain('/metrics')
      expect(Object.keys(doc.paths).length).toBe(Object.keys(spec.paths).length - 1)
      expect((await fetch(`${quiet.url}/metrics`)).status).toBe(404)
    } finally {
      await quiet.close()
    }
  })

  it('registers what Express serves: each method of a path is answered, any other is 405 with the Allow of the table', async () => {
    const table = RouteTable.of(app.app)
    const paths = [...new Set(table.routes.map(r => r.path))]
    for (const path of paths) {
      const methods = table.methodsOf(path)
      const url = `${app.url}${urlFor(path)}`
      for (const method of methods) {
        const r = await fetch(url, { method: method.toUpperCase() })
        expect([404, 405], `${method.toUpperCase()} ${path} answered ${r.status}`).not.toContain(r.status)
      }
      const other = ['PATCH', 'PUT', 'DELETE', 'POST', 'GET'].find(m => !methods.includes(m.toLowerCase() as never)) as string
      const r = await fetch(url, { method: other })
      expect(r.status, `${other} ${path}`).toBe(405)
      expect(r.headers.get('allow'), `${other} ${path}`).toBe(allowHeader(methods))
      expect(await r.json()).toMatchObject({ code: 'METHOD_NOT_ALLOWED' })
    }
  })

  it('is OpenAPI 3.1 with resolvable references and unique operation ids', () => {
    expect(spec.openapi).toBe('3.1.0')
    const text = JSON.stringify(spec)
    for (const [, name] of text.matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)) {
      expect(spec.components.schemas, `$ref ${name}`).toHaveProperty(name as string)
    }
    const ids = Object.values(spec.paths).flatMap((item: any) => Object.values(item).map((op: any) => op.operationId))
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('generates request bodies from the schemas the routes validate with', () => {
    const input = (schema: z.ZodType) => {
      const { $schema: _s, ...rest } = z.toJSONSchema(schema, { io: 'input', target: 'draft-2020-12', unrepresentable: 'any' }) as Record<string, unknown>
      return rest
    }
    const bodyOf = (path: string, method = 'post') => {
      const ref: string = spec.paths[path][method].requestBody.content['application/json'].schema.$ref
      const { $id: _id, ...schema } = spec.components.schemas[ref.split('/').pop() as string]
      return schema
    }
    for (const op of PATH_OPERATION_NAMES) {
      expect(bodyOf(`/api/{username}/{projectSlug}/content/${op}`), op).toEqual(input(PATH_OPERATIONS[op].schema))
      expect(spec.paths[`/api/{username}/{projectSlug}/content/${op}`].post.responses['200'].description).toContain(PATH_OPERATIONS[op].message)
    }
    // Strict bodies: a member the schema does not name is refused, and the reference says so.
    expect(bodyOf('/api/{username}/{projectSlug}/content/increment').additionalProperties).toBe(false)
    expect(bodyOf('/api/keys')).toEqual(input(apiKeyBody))
    for (const op of PATH_OPERATION_NAMES) {
      expect(spec.paths[`/api/{username}/{projectSlug}/content/${op}`].post.requestBody.required).toBe(true)
    }
  })

  it('describes errors with the catalogue: the {message, code} body and every code', () => {
    const error = spec.components.schemas.Error
    expect(error.required.sort()).toEqual(['code', 'message'])
    expect(error.properties.code.enum).toEqual(Object.keys(ERRORS))
    expect(error.properties.code.enum).toContain('METHOD_NOT_ALLOWED')
    const notAllowed = spec.components.responses.MethodNotAllowed
    expect(notAllowed.headers.Allow).toBeDefined()
    expect(notAllowed.content['application/json'].schema.allOf[1].properties.code.enum).toEqual(['METHOD_NOT_ALLOWED'])
    expect(spec.info.description).toMatch(/405 `METHOD_NOT_ALLOWED` with an `Allow` header/)
    expect(spec.info.description).toContain('| METHOD_NOT_ALLOWED | 405 |')
    for (const [path, item] of Object.entries(spec.paths) as Array<[string, any]>) {
      for (const [method, op] of Object.entries(item) as Array<[string, any]>) {
        const where = `${method} ${path}`
        expect(op.responses['500'], where).toBeDefined()
        if (op['x-contentd-auth'] !== 'none') expect(op.responses['401'], where).toBeDefined()
        expect(op.responses['405'], where).toEqual({ $ref: '#/components/responses/MethodNotAllowed' })
        for (const [status, response] of Object.entries(op.responses) as Array<[string, any]>) {
          if (Number(status) < 400 || status === '405') continue
          const codes: string[] = response.content['application/json'].schema.allOf[1].properties.code.enum
          // The one documented exception (docs/design.md §12): setting a schema the content breaks is 409, not 422.
          const statusOf = (code: string) => where === 'put /api/{username}/{projectSlug}/schema' && code === 'SCHEMA_VIOLATION' ? 409 : ERRORS[code as keyof typeof ERRORS].status
          for (const code of codes) expect(statusOf(code), `${where} ${code}`).toBe(Number(status))
        }
      }
    }
    const increment = spec.paths['/api/{username}/{projectSlug}/content/increment'].post.responses
    expect(increment['400'].content['application/json'].schema.allOf[1].properties.code.enum).toContain('NOT_A_NUMBER')
    expect(Object.keys(increment)).toEqual(expect.arrayContaining(['200', '400', '401', '403', '404', '412', '413', '429', '500']))
    expect(spec.paths['/api/{username}/{projectSlug}/content'].get.responses['404'].description).toContain('PATH_NOT_FOUND')
    expect(increment['422'].content['application/json'].schema.allOf[1].properties.code.enum).toEqual(['SCHEMA_VIOLATION', 'IDEMPOTENCY_KEY_REUSED'])
    expect(increment['403'].content['application/json'].schema.allOf[1].properties.code.enum).toContain('KEY_SCOPE_DENIED')
    // The writes and whole-content reads that came with the change log and transactions (docs/design.md §12).
    const content = spec.paths['/api/{username}/{projectSlug}/content']
    for (const [name, responses] of Object.entries({ batch: spec.paths['/api/{username}/{projectSlug}/content/batch'].post.responses, patch: content.patch.responses, revert: spec.paths['/api/{username}/{projectSlug}/content/revert'].post.responses })) {
      expect(responses['422'].content['application/json'].schema.allOf[1].properties.code.enum, name).toContain('SCHEMA_VIOLATION')
      expect(responses['403'].content['application/json'].schema.allOf[1].properties.code.enum, name).toContain('KEY_SCOPE_DENIED')
    }
    for (const read of [spec.paths['/api/{username}/{projectSlug}/content/changes'].get, spec.paths['/api/{username}/{projectSlug}/content/events'].get]) {
      expect(read.responses['403'].content['application/json'].schema.allOf[1].properties.code.enum).toContain('KEY_SCOPE_DENIED')
    }
    expect(spec.paths['/api/{username}/{projectSlug}/schema'].put.responses['409'].content['application/json'].schema.allOf[1].properties.code.enum).toEqual(['SCHEMA_VIOLATION'])
    expect(error.properties.errors.items.required.sort()).toEqual(['message', 'path'])
  })
})

describe('GET /docs', () => {
  it('serves Swagger UI from the installed package: only script files, under a CSP without inline scripts, nothing from another origin', async () => {
    const page = await fetch(`${app.url}/docs`)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toMatch(/^text\/html/)
    const csp = page.headers.get('content-security-policy') ?? ''
    expect(csp).toMatch(/script-src 'self'/)
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/)
    const html = await page.text()
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)]
    expect(scripts.map(s => [s[1]?.trim(), s[2]?.trim()])).toEqual([['src="/docs/assets/swagger-ui-bundle.js"', ''], ['src="/docs/assets/contentd-docs.js"', '']])
    expect(html).not.toMatch(/https?:\/\//)

    const bundle = await fetch(`${app.url}/docs/assets/swagger-ui-bundle.js`)
    expect(bundle.status).toBe(200)
    expect(bundle.headers.get('content-type')).toMatch(/javascript/)
    expect(await bundle.text()).toBe(readFileSync(createRequire(import.meta.url).resolve('swagger-ui-dist/swagger-ui-bundle.js'), 'utf8'))
    expect((await fetch(`${app.url}/docs/assets/swagger-ui.css`)).headers.get('content-type')).toMatch(/^text\/css/)

    const init = await fetch(`${app.url}/docs/assets/contentd-docs.js`)
    expect(init.headers.get('content-type')).toMatch(/javascript/)
    const code = await init.text()
    expect(() => new Function(code)).not.toThrow() // valid JavaScript
    expect(code).toContain("url: '/openapi.json'")
    // Swagger UI would otherwise send the document to its online validator.
    expect(code).toContain('validatorUrl: null')
  })

  it('answers 404 NOT_FOUND for a file that is not one of its assets', async () => {
    for (const name of ['package.json', '..%2Fpackage.json', 'index.html', 'constructor']) {
      const r = await fetch(`${app.url}/docs/assets/${name}`)
      expect(r.status, name).toBe(404)
      expect(await r.json()).toMatchObject({ code: 'NOT_FOUND' })
    }
  })
})

describe('the document agrees with what the server answers (issue 34, S1-S10)', () => {
  const op = (path: string, method = 'get') => spec.paths[path][method]
  const param = (path: string, name: string, method = 'get') => op(path, method).parameters.find((p: any) => p.name === name)
  const codesOf = (path: string, status: string, method = 'post') => op(path, method).responses[status].content['application/json'].schema.allOf[1].properties.code.enum

  it('lists INDEX_OUT_OF_RANGE for increment, decrement and push, and INVALID_PATH for POST /api/keys', () => {
    for (const name of ['increment', 'decrement', 'push']) expect(codesOf(`/api/{username}/{projectSlug}/content/${name}`, '400'), name).toContain('INDEX_OUT_OF_RANGE')
    expect(codesOf('/api/keys', '400')).toContain('INVALID_PATH')
  })

  it('types GET /openapi.json as a JSON object, and says which id {id} is', () => {
    const ok = op('/openapi.json').responses['200'].content['application/json'].schema
    expect(spec.components.schemas[ok.$ref.split('/').pop()]).toMatchObject({ type: 'object', required: expect.arrayContaining(['openapi', 'paths']) })
    expect(param('/api/{username}/{projectSlug}/webhooks/{id}', 'id', 'delete').description).toMatch(/webhook id \(`whk_/)
    expect(param('/api/keys/{id}', 'id', 'delete').description).toMatch(/key id \(`key_/)
  })

  it('gives {username} a pattern with "@", so /api/auth/signup and /api/keys/x match no project path', () => {
    const pattern = new RegExp(param('/api/{username}/{projectSlug}', 'username').schema.pattern)
    expect(pattern.test('@alice')).toBe(true)
    for (const literal of ['api', 'auth', 'keys', 'projects', 'alice']) expect(pattern.test(literal), literal).toBe(false)
    expect(new RegExp(param('/api/{username}/{projectSlug}', 'projectSlug').schema.pattern).test('demo')).toBe(true)
  })

  it('types limit, since and version as integers', () => {
    const content = '/api/{username}/{projectSlug}/content'
    for (const [path, name] of [[content, 'version'], [`${content}/changes`, 'since'], [`${content}/changes`, 'limit'], [`${content}/events`, 'since'], ['/api/keys', 'limit'], ['/api/projects', 'limit']] as const) {
      expect(param(path, name).schema.type, `${path} ${name}`).toBe('integer')
    }
  })

  it('makes ?access_token= a security scheme of the event stream, not a parameter', () => {
    expect(spec.components.securitySchemes.accessToken).toEqual(expect.objectContaining({ type: 'apiKey', in: 'query', name: 'access_token' }))
    const events = op('/api/{username}/{projectSlug}/content/events')
    expect(events.security).toEqual([{ bearerAuth: [] }, { accessToken: [] }])
    expect(events.parameters.map((p: any) => p.name)).not.toContain('access_token')
    expect(op('/api/{username}/{projectSlug}/content').security).toEqual([{ bearerAuth: [] }])
  })

  it('declares X-Request-Id on every response, ETag on 304, Idempotent-Replayed on idempotent writes, Last-Modified on the schema', () => {
    for (const [path, item] of Object.entries(spec.paths) as Array<[string, any]>) {
      for (const [method, operation] of Object.entries(item) as Array<[string, any]>) {
        for (const [status, response] of Object.entries(operation.responses) as Array<[string, any]>) {
          if (response.$ref) continue
          expect(response.headers['X-Request-Id'], `${method} ${path} ${status}`).toEqual({ $ref: '#/components/headers/XRequestId' })
        }
      }
    }
    expect(spec.components.responses.MethodNotAllowed.headers['X-Request-Id']).toBeDefined()
    const read = op('/api/{username}/{projectSlug}/content')
    expect(read.responses['304'].headers.ETag).toEqual({ $ref: '#/components/headers/ETag' })
    expect(op('/api/{username}/{projectSlug}/content/increment', 'post').responses['200'].headers['Idempotent-Replayed']).toBeDefined()
    expect(op('/api/{username}/{projectSlug}/content/increment', 'post').responses['400'].headers['Idempotent-Replayed']).toBeDefined()
    expect(op('/api/{username}/{projectSlug}/schema').responses['200'].headers['Last-Modified']).toBeDefined()
  })
})

describe('the response check of the API tests (test/api/openapi-check.ts)', () => {
  const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => {
    const text = body === undefined ? '' : JSON.stringify(body)
    return { status, body, text, headers: new Headers({ ...(text ? { 'content-type': 'application/json; charset=utf-8' } : {}), ...headers }) }
  }

  it('accepts an answer the document describes', async () => {
    expect(await openApiProblems(app.url, 'GET', '/api/me', answer(200, { username: '@ada', createdAt: new Date().toISOString() }, { 'x-request-id': 'r1' }))).toEqual([])
    expect(await openApiProblems(app.url, 'POST', '/api/auth/signup', answer(400, { message: 'bad', code: 'INVALID_BODY' }))).toEqual([])
    expect(await openApiProblems(app.url, 'PUT', '/api/me', answer(405, { message: 'no', code: 'METHOD_NOT_ALLOWED' }, { allow: 'GET, HEAD' }))).toEqual([])
  })

  it('reports a status the operation does not list, a code outside its list, a body that breaks its schema, an undeclared header', async () => {
    expect(await openApiProblems(app.url, 'GET', '/api/me', answer(418, { message: 'x', code: 'NOT_FOUND' }))).toEqual([expect.stringContaining('status 418 is not listed')])
    expect(await openApiProblems(app.url, 'POST', '/api/auth/signup', answer(400, { message: 'x', code: 'NOT_A_NUMBER' }))).toEqual([expect.stringContaining('breaks the schema')])
    expect(await openApiProblems(app.url, 'GET', '/api/me', answer(200, { username: 'ada' }))).toEqual([expect.stringContaining('breaks the schema')])
    expect(await openApiProblems(app.url, 'GET', '/api/me', answer(200, { username: '@ada', createdAt: new Date().toISOString() }, { etag: '"1"' }))).toEqual([expect.stringContaining('header etag is sent but not declared')])
    expect(await openApiProblems(app.url, 'GET', '/api/@ada/demo/content', answer(304, undefined, { etag: 'seven' }))).toEqual([expect.stringContaining('header etag: seven breaks its schema')])
  })

  it('matches literal segments before parameters, as OpenAPI does', () => {
    const templates = ['/api/{username}/{projectSlug}', '/api/auth/signup', '/api/keys/{id}']
    expect(matchPath(templates, '/api/auth/signup')).toBe('/api/auth/signup')
    expect(matchPath(templates, '/api/@ada/demo')).toBe('/api/{username}/{projectSlug}')
    expect(matchPath(templates, '/api/keys/key_1')).toBe('/api/keys/{id}')
    expect(matchPath(templates, '/api/keys/%ZZ')).toBeUndefined()
  })
})
