// Every event a client sends goes through here, whatever its name: it takes one point of
// the user's RATE_LIMIT budget (the one their HTTP requests draw from), is answered
// RATE_LIMITED with `retryAfter` past it, UNKNOWN_EVENT when no handler has its name, and
// otherwise reaches its handler with the payload and a reply function. The ack is
// recognised by position (the last argument, when it is a function), so `emit('subscribe',
// ack)` without a payload is still answered, with INVALID_BODY, by the handler.
import { userSubject, type Limiter } from '../limits/limiter.js'
import type { Logger } from '../logger.js'
import type { Metrics } from '../observability/metrics.js'
import { failure, rateLimited } from './replies.js'
import type { RealtimeSocket } from './types.js'

export type Reply = (answer: object) => void
export type EventHandler = (socket: RealtimeSocket, payload: unknown, reply: Reply) => void | Promise<void>

export interface EventRouterOptions {
  limiter: Limiter
  logger: Logger
  metrics?: Metrics | undefined
}

// Event names are client-chosen: only known names become metric labels.
const UNKNOWN_LABEL = 'other'
const SHOWN_NAME_CHARS = 64

export function routeEvents (socket: RealtimeSocket, handlers: Record<string, EventHandler>, { limiter, logger, metrics }: EventRouterOptions): void {
  const userBudget = userSubject(socket.data.identity.user.id)
  socket.onAny((event: string, ...args: unknown[]) => {
    const last = args.at(-1)
    const reply: Reply = typeof last === 'function' ? last as Reply : () => {}
    if (typeof last === 'function') args.pop()
    const handler = Object.hasOwn(handlers, event) ? handlers[event] : undefined
    metrics?.realtimeEvents.inc({ event: handler ? event : UNKNOWN_LABEL })
    void (async () => {
      try {
        const wait = await limiter.take(userBudget)
        if (wait !== null) { reply(rateLimited(wait)); return }
        if (!handler) { reply(failure('UNKNOWN_EVENT', JSON.stringify(String(event).slice(0, SHOWN_NAME_CHARS)))); return }
        await handler(socket, args[0], reply)
      } catch (e) {
        logger.error({ err: e, event: handler ? event : UNKNOWN_LABEL }, 'socket event failed')
        reply(failure('INTERNAL_ERROR'))
      }
    })()
  })
}
