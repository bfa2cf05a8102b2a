// Outbound requests to addresses a user chose (webhook receivers, JWKS URLs) check the address
// in the connection's own DNS lookup (docs/design.md §11): the address checked is the address
// connected to, so a name cannot resolve to a public address for a check and to an inside one
// for the connection that follows. A host given as a literal address is not looked up; callers
// check it first (checkWebhookTarget, or sendWebhook's own check).
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import { request as httpsRequest } from 'node:https'
import type { LookupFunction } from 'node:net'
import { isIP } from 'node:net'
import { forbiddenAddressReason, type Resolver } from './target-policy.js'

/** The lookup refused the name: none of its addresses was contacted. */
export class ForbiddenTarget extends Error {}

/** A connection lookup that resolves the name and refuses it when any address is forbidden. */
export function guardedLookup (resolve: Resolver, allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(addresses => {
      if (addresses.length === 0) throw new Error(`${hostname} does not resolve`)
      if (!allowPrivate) {
        for (const address of addresses) {
          const reason = forbiddenAddressReason(address)
          if (reason !== null) throw new ForbiddenTarget(`${hostname} resolves to ${address}, which is ${reason}`)
        }
      }
      const family = options.family === 4 || options.family === 6 ? options.family : 0
      const usable = addresses.filter(a => family === 0 || isIP(a) === family)
      if (usable.length === 0) throw new Error(`${hostname} has no IPv${family} address`)
      if (options.all) callback(null, usable.map(address => ({ address, family: isIP(address) })))
      else callback(null, usable[0] as string, isIP(usable[0] as string))
    }).catch((e: unknown) => callback(e as NodeJS.ErrnoException, '', 0))
  }
}

export interface GuardedFetchOptions {
  resolve: Resolver
  allowPrivate: boolean
  /** The answer's body is read up to this many bytes; a larger one fails the fetch. */
  maxBytes: number
}

/**
 * A `fetch` (as jose's customFetch calls it) over one fresh connection whose lookup is
 * guardedLookup. Redirects are not followed; the body is read whole, within `maxBytes`.
 */
export async function guardedFetch (target: string, init: RequestInit, options: GuardedFetchOptions): Promise<Response> {
  const url = new URL(target)
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest
  const headers: Record<string, string> = {}
  new Headers(init.headers).forEach((value, name) => { headers[name] = value })
  return new Promise<Response>((resolve, reject) => {
    const request = send(url, {
      method: init.method ?? 'GET',
      headers,
      lookup: guardedLookup(options.resolve, options.allowPrivate),
      // One connection per request: a pooled socket would skip the lookup (and its check).
      agent: false,
      ...(init.signal ? { signal: init.signal } : {})
    }, response => {
      const chunks: Buffer[] = []
      let received = 0
      response.on('data', (chunk: Buffer) => {
        received += chunk.length
        if (received > options.maxBytes) {
          response.destroy()
          reject(new Error(`the answer of ${url.origin} is larger than ${options.maxBytes} bytes`))
        } else {
          chunks.push(chunk)
        }
      })
      response.on('end', () => {
        const status = response.statusCode ?? 502
        const body = NULL_BODY_STATUSES.has(status) ? null : Buffer.concat(chunks)
        resolve(new Response(body, { status, statusText: response.statusMessage ?? '', headers: headersOf(response.headers) }))
      })
      response.on('error', reject)
    })
    request.on('error', reject)
    request.end()
  })
}

/** Statuses a Response may not carry a body with. */
const NULL_BODY_STATUSES = new Set([204, 205, 304])

function headersOf (incoming: IncomingHttpHeaders): Headers {
  const headers = new Headers()
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined) continue
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one)
  }
  return headers
}
