// Security headers (helmet) and CORS headers for every response, in one middleware.
//
// With their default options both packages send the same headers on every request, yet
// rebuild them each time (helmet runs a dozen small middlewares; cors merges its options per
// request). Here helmet is run once at start-up against a recording response, and its calls
// are replayed per request; CORS with `*` is two constant headers outside preflight. Anything
// that depends on the request (a preflight, a list of allowed origins) still goes to cors.
import cors from 'cors'
import type { RequestHandler, Response } from 'express'
import helmet from 'helmet'

type HeaderCall = { name: string, value: string } | { name: string, value: null }

/** What helmet() does to a response, recorded once: headers set and headers removed. */
function recordHelmet (): HeaderCall[] {
  const calls: HeaderCall[] = []
  const recorder = {
    setHeader (name: string, value: unknown) { calls.push({ name, value: String(value) }) },
    removeHeader (name: string) { calls.push({ name, value: null }) }
  }
  let finished = false
  helmet()({} as never, recorder as never, (error?: unknown) => {
    if (error) throw error instanceof Error ? error : new Error(String(error))
    finished = true
  })
  // helmet's defaults are synchronous; if that ever changes, fail at start-up, not per request.
  if (!finished) throw new Error('helmet did not finish synchronously; cannot precompute its headers')
  return calls
}

export function responseHeaders (corsOrigins: '*' | string[], exposedHeaders: string[]): RequestHandler {
  const securityHeaders = recordHelmet()
  const corsMiddleware = cors({ origin: corsOrigins, exposedHeaders })
  const exposed = exposedHeaders.join(',')
  const applySecurityHeaders = (res: Response) => {
    for (const call of securityHeaders) {
      if (call.value === null) res.removeHeader(call.name)
      else res.setHeader(call.name, call.value)
    }
  }
  return (req, res, next) => {
    applySecurityHeaders(res)
    if (corsOrigins === '*' && req.method !== 'OPTIONS') {
      // What cors({origin: '*'}) sets on every request that is not a preflight.
      res.setHeader('Access-Control-Allow-Origin', '*')
      res.setHeader('Access-Control-Expose-Headers', exposed)
      next()
      return
    }
    corsMiddleware(req, res, next)
  }
}
