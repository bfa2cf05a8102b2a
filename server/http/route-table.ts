// Every route contentd serves goes through one RouteTable: method, path and handlers. The
// table is the one list of what the server answers. The 405 answers read it (the methods a
// path allows), the API reference is generated from it (server/openapi/spec.ts), and the
// reference's test compares it with the documentation, without looking inside Express.
//
// Routes are added straight onto the app, each with its whole chain of handlers (a scope's
// `before` handlers, then its own): no sub-routers, so a request passes no layers but its
// route's, and a URL no route knows is answered 404 without being authenticated or counted.
import type { Express, Request, RequestHandler, Response } from 'express'
import { ContentdError } from '../../shared/errors.js'

export type Method = 'get' | 'post' | 'put' | 'delete' | 'patch'

export interface RegisteredRoute {
  method: Method
  /** Express form: /api/:username/:projectSlug/content */
  path: string
}

/** Registers routes below a prefix, each starting with the scope's `before` handlers. */
export interface RouteScope {
  get: (path: string, ...handlers: RequestHandler[]) => void
  post: (path: string, ...handlers: RequestHandler[]) => void
  put: (path: string, ...handlers: RequestHandler[]) => void
  delete: (path: string, ...handlers: RequestHandler[]) => void
  patch: (path: string, ...handlers: RequestHandler[]) => void
}

interface Entry extends RegisteredRoute { handlers: RequestHandler[] }

// A segment is a literal or a plain ":name" parameter: nothing Express would read as a
// pattern (optional parts, wildcards), so the specificity check below stays simple.
const SEGMENT = /^(?::[A-Za-z_][A-Za-z0-9_]*|[A-Za-z0-9._~@-]+)$/
const isParameter = (segment: string) => segment.startsWith(':')
const segmentsOf = (path: string) => path.split('/').slice(1)

/** "GET, HEAD, POST": HEAD is served wherever GET is (Express answers it with the GET handler). */
export function allowHeader (methods: readonly Method[]): string {
  const upper = methods.map(m => m.toUpperCase())
  if (upper.includes('GET')) upper.push('HEAD')
  return [...new Set(upper)].sort().join(', ')
}

const installedTables = new WeakMap<Express, RouteTable>()

export class RouteTable {
  private readonly entries: Entry[] = []
  private installed = false

  /** The routes registered so far, in registration order. */
  get routes (): RegisteredRoute[] {
    return this.entries.map(({ method, path }) => ({ method, path }))
  }

  /** The methods registered for one path (Express form), in registration order. */
  methodsOf (path: string): Method[] {
    return this.entries.filter(e => e.path === path).map(e => e.method)
  }

  scope (prefix = '', before: RequestHandler[] = []): RouteScope {
    const add = (method: Method) => (path: string, ...handlers: RequestHandler[]) => { this.add(method, prefix + path, [...before, ...handlers]) }
    return { get: add('get'), post: add('post'), put: add('put'), delete: add('delete'), patch: add('patch') }
  }

  add (method: Method, path: string, handlers: RequestHandler[]): void {
    if (this.installed) throw new Error(`route-table: ${method.toUpperCase()} ${path} added after install()`)
    if (!path.startsWith('/') || !segmentsOf(path).every(s => SEGMENT.test(s))) throw new Error(`route-table: unsupported path ${path}`)
    if (this.entries.some(e => e.path === path && e.method === method)) throw new Error(`route-table: ${method.toUpperCase()} ${path} registered twice`)
    if (handlers.length === 0) throw new Error(`route-table: ${method.toUpperCase()} ${path} has no handler`)
    this.entries.push({ method, path, handlers })
  }

  /**
   * Adds every path to the app as one Express route: its methods, then a last handler that
   * answers any other method with 405 METHOD_NOT_ALLOWED and `Allow`. For such a method it
   * is the only handler that runs (no identity, access or rate limit before it), so for a
   * path the API knows, a wrong method is 405 whoever calls, before any 401: the answer
   * reveals nothing the public API reference does not (docs/design.md §13), and a 401 would send
   * the client after a credential that cannot help. A URL that matches no path falls
   * through to the app's 404.
   * Express tries routes in the order they are added and the first whose path matches takes
   * the request (with its 405 for other methods), so a path must come before every less
   * specific one that matches the same URLs: /api/auth/signup before
   * /api/:username/:projectSlug. install() refuses an order that breaks this.
   * OPTIONS never gets here: CORS answers every preflight before routing.
   */
  install (app: Express): void {
    const paths = [...new Set(this.entries.map(e => e.path))]
    paths.forEach((path, i) => {
      const shadowing = paths.slice(0, i).find(earlier => shadows(earlier, path))
      if (shadowing) throw new Error(`route-table: ${path} is registered after ${shadowing}, which would take its requests`)
    })
    for (const path of paths) {
      const route = app.route(path)
      const methods = this.methodsOf(path)
      for (const entry of this.entries.filter(e => e.path === path)) route[entry.method](...entry.handlers)
      route.all(methodNotAllowed(allowHeader(methods)))
    }
    this.installed = true
    installedTables.set(app, this)
  }

  /** The table an app was built from (for the API reference's test). */
  static of (app: Express): RouteTable {
    const table = installedTables.get(app)
    if (!table) throw new Error('route-table: no table was installed on this app')
    return table
  }
}

/**
 * True when a URL matched by `later` would be matched by `earlier` first while `later` is
 * more specific there (a literal where `earlier` has a parameter). Express matches paths
 * case-insensitively, and so does this.
 */
function shadows (earlier: string, later: string): boolean {
  const a = segmentsOf(earlier.toLowerCase())
  const b = segmentsOf(later.toLowerCase())
  if (a.length !== b.length) return false
  let laterMoreSpecific = false
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as string
    const y = b[i] as string
    if (isParameter(x) && !isParameter(y)) laterMoreSpecific = true
    else if (!isParameter(x) && !isParameter(y) && x !== y) return false
  }
  return laterMoreSpecific
}

function methodNotAllowed (allow: string): RequestHandler {
  return (req: Request, res: Response) => {
    res.setHeader('Allow', allow)
    throw new ContentdError('METHOD_NOT_ALLOWED', `${req.method} is not one of ${allow}`)
  }
}
