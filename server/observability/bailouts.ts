// A shortcut that reaches into a library's or Node's private internals (write batching,
// direct broadcast frames, SSE direct writes) takes the public path when an internal is not
// where it was. Each time is counted, and the first of each reason is logged, so an upgrade
// that moves one shows in the metrics and the log, not only as lost CPU (CONTRIBUTING.md,
// "Library internals").
import type { Counter } from 'prom-client'
import type { Logger } from '../logger.js'

/**
 * Counts a bailout on `counter` (label `reason`) and logs `message` once per reason among
 * those noted in `logged` (a reporter's own set unless one is shared).
 */
export function bailoutReporter<Reason extends string> (counter: Counter<'reason'> | undefined, logger: Pick<Logger, 'warn'>, message: string, logged = new Set<string>()): (reason: Reason) => void {
  return reason => {
    counter?.inc({ reason })
    if (logged.has(reason)) return
    logged.add(reason)
    logger.warn({ reason }, message)
  }
}
