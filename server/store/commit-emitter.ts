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
    for (const listener of this.listeners) {
      try { listener(change) } catch { /* see above: the commit stands */ }
    }
  }
}
