// The change feed between nodes (docs/design.md §7, §9): every node publishes its commits and
// access events on one Redis channel and hears the others'. A change travels as its wire
// form (wire.ts), the very text consumers send, so the sending node serializes nothing more
// and the receiving node parses it once and hands the same text on (rememberWire).
//
// A message is four lines: the sending node's id, the kind ("change", "access", "webhooks"
// or "presence"), the project id (empty for access), and the JSON (empty for webhooks: the
// receiving node asks the store which webhooks the project has; for presence, the event as
// this node sent it to its own sockets, which the others send on as it is). None of the
// first three can hold a newline, and JSON text has no raw newline, so splitting at the
// first three is exact.
//
// The format is this module's own (it replaced Socket.IO's serverSideEmit and, for presence,
// its Redis adapter, issue 27): nodes of different versions do not understand each other's
// messages (docs/operations.md).
//
// A node ignores its own messages: it has already handed them to its own listeners, so each
// reaches every node once. One publishing connection keeps them in the order sent.
import { randomUUID } from 'node:crypto'
import type { ChangeEntry } from '../../shared/events.js'
import { isPlainObject } from '../../shared/json.js'
import type { Logger } from '../logger.js'
import type { Metrics } from '../observability/metrics.js'
import type { RedisConnection } from '../redis-connection.js'
import type { AccessEvent } from '../services/access-events.js'
import type { ChangeFeed, NodeRelay } from './change-feed.js'
import { rememberWire, wireOf } from './wire.js'

export const FEED_CHANNEL = 'contentd:feed'

export interface RedisRelay extends NodeRelay {
  close (): Promise<void>
}

/** Splits a message into its four parts; null when it is not one of ours. */
export function parseMessage (message: string): { node: string, kind: string, projectId: string, json: string } | null {
  const a = message.indexOf('\n')
  const b = a < 0 ? -1 : message.indexOf('\n', a + 1)
  const c = b < 0 ? -1 : message.indexOf('\n', b + 1)
  if (c < 0) return null
  return { node: message.slice(0, a), kind: message.slice(a + 1, b), projectId: message.slice(b + 1, c), json: message.slice(c + 1) }
}

export function changeMessage (node: string, projectId: string, json: string): string {
  return `${node}\nchange\n${projectId}\n${json}`
}

export function webhooksMessage (node: string, projectId: string): string {
  return `${node}\nwebhooks\n${projectId}\n`
}

export function presenceMessage (node: string, projectId: string, json: string): string {
  return `${node}\npresence\n${projectId}\n${json}`
}

export function accessMessage (node: string, event: AccessEvent): string {
  return `${node}\naccess\n\n${JSON.stringify(event)}`
}

/** Connects `feed` to the other nodes through Redis (its own publish and subscribe connections). */
export async function connectRedisRelay (base: RedisConnection, feed: ChangeFeed, logger: Logger, metrics?: Metrics): Promise<RedisRelay> {
  const node = randomUUID()
  const pub = base.duplicate()
  const sub = base.duplicate()
  // Without an 'error' listener a dropped connection would end the process; the clients
  // reconnect by themselves (the base connection's reconnect strategy).
  pub.on('error', (e: unknown) => logger.warn({ err: e }, 'redis (change feed publish) connection problem'))
  sub.on('error', (e: unknown) => logger.warn({ err: e }, 'redis (change feed subscribe) connection problem'))
  await Promise.all([pub.connect(), sub.connect()])
  await sub.subscribe(FEED_CHANNEL, (message: string) => {
    const parts = parseMessage(message)
    if (!parts || parts.node === node) return
    try {
      if (parts.kind === 'change') {
        const change = JSON.parse(parts.json) as ChangeEntry
        rememberWire(change, parts.json)
        feed.publishChange(parts.projectId, change)
      } else if (parts.kind === 'access') {
        feed.publishAccess(JSON.parse(parts.json) as AccessEvent)
      } else if (parts.kind === 'webhooks') {
        feed.publishWebhooks(parts.projectId)
      } else if (parts.kind === 'presence') {
        // Parsed only to be sure it is JSON: the sockets get the text as it came.
        if (!isPlainObject(JSON.parse(parts.json))) throw new Error('a presence event is a JSON object')
        feed.publishPresence(parts.projectId, parts.json)
      }
    } catch (e) {
      logger.warn({ err: e }, 'ignoring a malformed change feed message from Redis')
    }
  })
  // Published without waiting: a publish lost while Redis is away is logged and counted, never
  // fatal. A lost change shows up to clients as a version gap, which they bridge from the log
  // (docs/design.md §7); a lost presence event, in the next presence:list (§14).
  const publish = (kind: string, message: string) => {
    pub.publish(FEED_CHANNEL, message).catch((e: unknown) => {
      metrics?.relayLost.inc({ kind })
      logger.warn({ err: e, kind }, 'redis publish failed; a change feed message to other nodes was lost')
    })
  }
  const relay: RedisRelay = {
    sendChange: (projectId, change) => publish('change', changeMessage(node, projectId, wireOf(change))),
    sendAccess: event => publish('access', accessMessage(node, event)),
    sendWebhooks: projectId => publish('webhooks', webhooksMessage(node, projectId)),
    sendPresence: (projectId, json) => publish('presence', presenceMessage(node, projectId, json)),
    async close () {
      feed.relayTo(null)
      await Promise.allSettled([sub.close(), pub.close()])
    }
  }
  feed.relayTo(relay)
  return relay
}
