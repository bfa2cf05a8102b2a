// Hands each committed change to the store's listeners (the realtime layer, metrics). Shared
// by every store so the rule lives once: a listener's failure is swallowed, because the
// change is committed and acknowledged; a throwing listener must not turn it into an error
// for the writer or keep the listeners after it from hearing about it.
import type { CommitListener, CommittedChange } from './types.js'

export class CommitEmitter {
  private readonly listeners: CommitListener[] = []

  on (listener: CommitListener): void {
    this.listeners.push(listener)
  }

  emit (change: CommittedChange): void {
    // One clock read per change (not per listener or subscriber): the moment it is durable.
    change.committedAt ??= performance.now()
    for (const listener of this.listeners) {
      try { listener(change) } catch { /* see above: the commit stands */ }
    }
  }
}
