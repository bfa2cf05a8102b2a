// Liveness, readiness and metrics endpoints (outside /api: no user credentials involved).
//   GET /readyz  — 200 when the store answers and, with Redis configured, Redis answers too;
//                  503 STORE_UNAVAILABLE otherwise (take the node out of the load balancer);
//                  with BACKUP_DIR, the last good backup's time as "backup": {"lastAt"}.
//   GET /metrics — Prometheus text. By default behind Authorization: Bearer <METRICS_TOKEN>
//                  (with no token configured it answers 401 to everyone, saying why);
//                  METRICS=open serves it to anyone, METRICS=off removes it.
import type { ResponseBody } from '../../shared/api/index.js'
import { createHash, timingSafeEqual } from 'node:crypto'
import type { RequestHandler } from 'express'
import { ContentdError } from '../../shared/errors.js'
import type { BackupStatus } from '../backup/schedule.js'
import type { Config } from '../config.js'
import type { RouteScope } from '../http/route-table.js'
import type { Store } from '../store/types.js'
import type { Metrics } from './metrics.js'

/** Anything that answers PING: the `redis` client, or a test double in unit tests. */
export interface Pingable { ping (): Promise<unknown> }

const READINESS_TIMEOUT_MS = 2000

function withTimeout<T> (work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => { timer = setTimeout(() => reject(new Error('timed out')), ms) })
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer))
}

export function readinessRoute (store: Store, redis: Pingable | undefined, backups?: BackupStatus): RequestHandler {
  return async (_req, res) => {
    const checks: Record<string, 'ok'> = {}
    try {
      await withTimeout(store.ping(), READINESS_TIMEOUT_MS)
      checks.store = 'ok'
      if (redis) {
        await withTimeout(redis.ping(), READINESS_TIMEOUT_MS)
        checks.redis = 'ok'
      }
    } catch {
      throw new ContentdError('STORE_UNAVAILABLE')
    }
    // With scheduled backups (BACKUP_DIR), when the last good one began (docs/design.md §18).
    const body: ResponseBody<'Ready'> = backups ? { status: 'ready', checks, backup: { lastAt: backups.lastSuccessAt()?.toISOString() ?? null } } : { status: 'ready', checks }
    res.json(body)
  }
}

const digest = (text: string) => createHash('sha256').update(text).digest()

/** Compares hashes of equal length, so neither length nor content leaks through timing. */
function tokenMatches (header: string | undefined, token: string): boolean {
  const match = /^Bearer[ ]+(\S+)[ ]*$/i.exec(header ?? '')
  return match !== null && timingSafeEqual(digest(match[1] as string), digest(token))
}

export function observabilityRoutes (routes: RouteScope, config: Config, store: Store, metrics: Metrics, redis: Pingable | undefined, backups?: BackupStatus): void {
  routes.get('/readyz', readinessRoute(store, redis, backups))
  const { access, token } = config.metrics
  if (access === 'off') return
  routes.get('/metrics', async (req, res) => {
    if (access === 'token') {
      // Metrics tell a lot about who uses the server and how; nobody reads them by default.
      if (token === undefined) throw new ContentdError('AUTH_REQUIRED', 'set METRICS_TOKEN on the server and send it as a bearer token, or set METRICS=open')
      if (!tokenMatches(req.headers.authorization, token)) {
        throw new ContentdError(req.headers.authorization ? 'INVALID_TOKEN' : 'AUTH_REQUIRED')
      }
    }
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics())
  })
}
