// [rules, issue 31] After a change of a project's rules or trust setting, each app user's live
// read of it on this node's sockets (path subscriptions, live queries) is decided again: token,
// then `.read` at its path (docs/design.md §17), with the content read once for all of them
// (and for the SSE streams re-checking the same change: AppRules.recheckReadsOf).
// A refused one is ended by its owner with the refusal.
import { ContentdError, isContentdError, type ErrorBody } from '../../shared/errors.js'
import { dotSegments } from '../../shared/path.js'
import type { AppRules } from '../services/app-rules.js'
import type { RealtimeSocket } from './types.js'

interface LiveRead {
  projectId: string | null
  state: 'pending' | 'active' | 'ended'
  path: string
}

export function recheckAppReads<S extends LiveRead> (
  connections: ReadonlyMap<RealtimeSocket, ReadonlyMap<string, S>>,
  projectId: string,
  rules: AppRules | undefined,
  end: (subscription: S, reason: ErrorBody) => void
): void {
  if (!rules) return
  // Pending ones too: their first check may have been made with the rules before the change.
  const affected: Array<[RealtimeSocket, S]> = []
  for (const [socket, mine] of connections) {
    if (socket.data.identity.app === undefined) continue
    for (const subscription of mine.values()) {
      if (subscription.projectId === projectId && subscription.state !== 'ended') affected.push([socket, subscription])
    }
  }
  if (affected.length === 0) return
  const refuse = (subscription: S, error: unknown) => end(subscription, isContentdError(error) ? error.toBody() : new ContentdError('INTERNAL_ERROR').toBody())
  rules.recheckReadsOf({ id: projectId }).then(decide => {
    for (const [socket, subscription] of affected) decide(socket.data.token, dotSegments(subscription.path)).catch((error: unknown) => refuse(subscription, error))
  }, (error: unknown) => {
    for (const [, subscription] of affected) refuse(subscription, error)
  })
}
