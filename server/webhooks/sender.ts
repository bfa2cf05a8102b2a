// Sends one signed webhook request (docs/design.md §11): POST of the JSON payload with the
// Standard Webhooks headers, to the URL's own host only. The address is checked after DNS
// resolution, in the connection's own lookup, so the address checked is the address
// connected to (no second resolution an attacker's DNS could answer differently). Redirects
// are not followed: a 3xx is a failure like any other non-2xx. No answer within
// DELIVERY_TIMEOUT_MS is a failure too.
import { request as httpRequest, type RequestOptions } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { isIP } from 'node:net'
import { Webhook } from 'standardwebhooks'
import { DELIVERY_TIMEOUT_MS } from '../../shared/webhooks.js'
import { ForbiddenTarget, guardedLookup } from './guarded-request.js'
import { forbiddenAddressReason, hostOf, systemResolver, type Resolver } from './target-policy.js'

export interface SendRequest {
  url: string
  /** whsec_… */
  secret: string
  /** The same for every attempt at one message (webhook-id). */
  messageId: string
  payload: string
  /** Seconds in webhook-timestamp come from this (ms since the epoch). */
  now: number
  allowPrivate: boolean
  timeoutMs?: number
  /** Aborts the attempt (the node is stopping). */
  signal?: AbortSignal
  resolve?: Resolver
}

export interface SendResult {
  ok: boolean
  /** The receiver's status, or null when there was no answer. */
  status: number | null
  error: string | null
  durationMs: number
}

/** Read at most this much of a receiver's answer (it is discarded). */
const MAX_ANSWER_BYTES = 64 * 1024

export async function sendWebhook (req: SendRequest): Promise<SendResult> {
  const started = performance.now()
  const finish = (status: number | null, error: string | null): SendResult =>
    ({ ok: error === null, status, error, durationMs: Math.round(performance.now() - started) })
  const url = new URL(req.url)
  if (!req.allowPrivate && url.protocol !== 'https:') return finish(null, `${url.protocol} URLs are refused (WEBHOOK_ALLOW_PRIVATE is not true)`)
  const host = hostOf(url)
  if (!req.allowPrivate && isIP(host) !== 0) {
    const reason = forbiddenAddressReason(host)
    if (reason !== null) return finish(null, `not contacted: ${host} is ${reason}`)
  }
  const signature = new Webhook(req.secret).sign(req.messageId, new Date(req.now), req.payload)
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'contentd-webhooks',
    'webhook-id': req.messageId,
    'webhook-timestamp': String(Math.floor(req.now / 1000)),
    'webhook-signature': signature
  }
  const timeoutMs = req.timeoutMs ?? DELIVERY_TIMEOUT_MS
  const timeout = AbortSignal.timeout(timeoutMs)
  const options: RequestOptions = {
    method: 'POST',
    headers,
    lookup: guardedLookup(req.resolve ?? systemResolver, req.allowPrivate),
    signal: req.signal ? AbortSignal.any([timeout, req.signal]) : timeout,
    // One connection per attempt: a pooled socket would skip the lookup (and its check).
    agent: false
  }
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise<SendResult>(resolve => {
    const request = send(url, options, response => {
      const status = response.statusCode ?? null
      let received = 0
      response.on('data', (chunk: Buffer) => {
        received += chunk.length
        if (received > MAX_ANSWER_BYTES) response.destroy()
      })
      const done = () => {
        if (status !== null && status >= 200 && status < 300) resolve(finish(status, null))
        else resolve(finish(status, status !== null && status >= 300 && status < 400 ? `HTTP ${status} (redirects are not followed)` : `HTTP ${status}`))
      }
      response.on('end', done)
      response.on('close', done)
      response.on('error', done)
    })
    request.on('error', (e: Error) => {
      if (e instanceof ForbiddenTarget) resolve(finish(null, `not contacted: ${e.message}`))
      else if (req.signal?.aborted) resolve(finish(null, 'abandoned: the node is stopping'))
      else if (timeout.aborted) resolve(finish(null, `no 2xx answer within ${timeoutMs / 1000} s`))
      else resolve(finish(null, describeNetworkError(e)))
    })
    request.end(req.payload)
  })
}

function describeNetworkError (e: Error): string {
  const code = (e as NodeJS.ErrnoException).code
  return code ? `${code}: ${e.message}` : e.message
}
