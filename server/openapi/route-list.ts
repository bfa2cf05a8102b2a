// The routes registered on an Express 5 app, walked from its router stacks (mounted routers
// included), as "METHOD /path/{param}" in OpenAPI form. Used to prove the reference
// documents every route. Plain middleware is not a route and is not listed.

interface RouteLike { methods: Record<string, boolean | undefined> }
interface LayerLike {
  route?: RouteLike
  handle?: { stack?: LayerLike[] }
  rawPath?: string | RegExp | Array<string | RegExp>
}

export interface ListedRoute { method: string, path: string }

const join = (prefix: string, path: string) => ('/' + `${prefix}/${path}`.split('/').filter(Boolean).join('/'))

/** Express ":param" → OpenAPI "{param}". */
export const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')

export function listRoutes (app: { router: { stack: unknown[] } }): ListedRoute[] {
  const out: ListedRoute[] = []
  walk(app.router.stack as LayerLike[], '', out)
  const seen = new Set<string>()
  return out.filter(r => {
    const key = `${r.method} ${r.path}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

function walk (stack: LayerLike[], prefix: string, out: ListedRoute[]): void {
  for (const layer of stack) {
    const raw = layer.rawPath
    const paths = (Array.isArray(raw) ? raw : [raw]).map(p => {
      if (p === undefined) return '/'
      if (typeof p !== 'string') throw new Error(`route-list: a RegExp route (${String(p)}) cannot be checked against the reference`)
      return p
    })
    if (layer.route) {
      const methods = Object.keys(layer.route.methods).filter(m => m !== '_all' && layer.route?.methods[m])
      for (const path of paths) for (const method of methods) out.push({ method: method.toUpperCase(), path: toOpenApiPath(join(prefix, path)) })
    } else if (Array.isArray(layer.handle?.stack)) {
      for (const path of paths) walk(layer.handle.stack, join(prefix, path), out)
    }
  }
}
