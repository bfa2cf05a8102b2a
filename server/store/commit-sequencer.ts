// Releases committed changes in version order per project, for stores whose replies can
// arrive out of order (MongoDB answers concurrent updates over a connection pool).
//
// Why this is enough: when the reply for change C arrives, any operation of this process
// that could still get a LOWER version than C is one already in flight at that moment;
// anything sent later executes after C. So C is released once every operation in flight at
// its reply has finished, and releases go out as a version-ordered prefix, so a change
// whose own wait is over still waits for lower versions ahead of it.
import type { CommittedChange } from './types.js'

export interface CommitTicket {
  readonly projectId: string
  finished: boolean
  change: CommittedChange | null
  /** Tickets that were in flight when this one's reply arrived. */
  waitFor: CommitTicket[]
}

export class CommitSequencer {
  private readonly inFlight = new Map<string, Set<CommitTicket>>()
  private readonly completed = new Map<string, CommitTicket[]>()

  constructor (private readonly release: (change: CommittedChange) => void) {}

  /** Call before sending the operation. */
  begin (projectId: string): CommitTicket {
    const ticket: CommitTicket = { projectId, finished: false, change: null, waitFor: [] }
    let flying = this.inFlight.get(projectId)
    if (!flying) { flying = new Set(); this.inFlight.set(projectId, flying) }
    flying.add(ticket)
    return ticket
  }

  /** Call exactly once: with the change when it committed, with null when it did not. */
  finish (ticket: CommitTicket, change: CommittedChange | null): void {
    if (ticket.finished) return
    const flying = this.inFlight.get(ticket.projectId) as Set<CommitTicket>
    flying.delete(ticket)
    if (flying.size === 0) this.inFlight.delete(ticket.projectId)
    ticket.finished = true
    if (change) {
      ticket.change = change
      ticket.waitFor = [...flying]
      const done = this.completed.get(ticket.projectId) ?? []
      done.push(ticket)
      done.sort((a, b) => (a.change as CommittedChange).entry.version - (b.change as CommittedChange).entry.version)
      this.completed.set(ticket.projectId, done)
    }
    this.drain(ticket.projectId)
  }

  private drain (projectId: string): void {
    const done = this.completed.get(projectId)
    if (!done) return
    while (done.length > 0 && (done[0] as CommitTicket).waitFor.every(t => t.finished)) {
      this.release((done.shift() as CommitTicket).change as CommittedChange)
    }
    if (done.length === 0) this.completed.delete(projectId)
  }
}
