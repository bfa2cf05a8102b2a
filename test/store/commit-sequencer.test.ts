// The sequencer must hand changes to listeners in version order whatever order the
// replies arrive in, and never hold a change forever.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { CommitSequencer, type CommitTicket } from '../../server/store/commit-sequencer.js'
import type { CommittedChange, ProjectRecord } from '../../server/store/types.js'

const project: ProjectRecord = { id: 'p1', ownerId: 'u', ownerName: 'alice', slug: 'demo', name: 'demo', createdAt: '', version: 0 }
const change = (version: number): CommittedChange => ({ project, entry: { project: '@alice/demo', version, op: 'increment', path: 'n', value: 1, at: '', actor: { type: 'user', name: '@alice' } } })

describe('CommitSequencer', () => {
  it('holds a reply that overtook an earlier, still running operation', () => {
    const released: number[] = []
    const sequencer = new CommitSequencer(c => released.push(c.entry.version))
    const first = sequencer.begin('p1')
    const second = sequencer.begin('p1')
    // The server ran `first` as version 1 and `second` as 2, but the second reply came first.
    sequencer.finish(second, change(2))
    expect(released).toEqual([])
    sequencer.finish(first, change(1))
    expect(released).toEqual([1, 2])
  })

  it('does not wait for failures, and does not wait for operations sent after a reply', () => {
    const released: number[] = []
    const sequencer = new CommitSequencer(c => released.push(c.entry.version))
    const failing = sequencer.begin('p1')
    const ok = sequencer.begin('p1')
    sequencer.finish(ok, change(7))
    expect(released).toEqual([])
    const later = sequencer.begin('p1')
    sequencer.finish(failing, null)
    expect(released).toEqual([7])
    sequencer.finish(later, change(8))
    expect(released).toEqual([7, 8])
  })

  it('keeps projects independent', () => {
    const released: string[] = []
    const sequencer = new CommitSequencer(c => released.push(`${c.project.id}:${c.entry.version}`))
    const slow = sequencer.begin('p1')
    const other = sequencer.begin('p2')
    sequencer.finish(other, { ...change(1), project: { ...project, id: 'p2' } })
    expect(released).toEqual(['p2:1'])
    sequencer.finish(slow, change(1))
    expect(released).toEqual(['p2:1', 'p1:1'])
  })

  it('releases every success exactly once, in version order, for any interleaving', () => {
    // Model: operations are sent in some order; the server executes each at some point
    // after it was sent (versions follow execution order); replies arrive in any order
    // after execution. Steps pick which of the possible events happens next.
    fc.assert(fc.property(fc.array(fc.nat(), { minLength: 1, maxLength: 200 }), fc.array(fc.boolean(), { maxLength: 40 }), (choices, failures) => {
      const released: number[] = []
      const sequencer = new CommitSequencer(c => released.push(c.entry.version))
      const total = Math.min(20, Math.max(1, choices.length % 21))
      let sent = 0
      let version = 0
      const awaitingExecution: CommitTicket[] = []
      const awaitingReply: Array<{ ticket: CommitTicket, version: number | null }> = []
      const successes: number[] = []
      let step = 0
      while (sent < total || awaitingExecution.length > 0 || awaitingReply.length > 0) {
        const choice = choices[step++ % choices.length] as number
        const kinds = [sent < total ? 'send' : null, awaitingExecution.length > 0 ? 'execute' : null, awaitingReply.length > 0 ? 'reply' : null].filter(Boolean)
        const kind = kinds[choice % kinds.length]
        if (kind === 'send') {
          awaitingExecution.push(sequencer.begin('p1'))
          sent++
        } else if (kind === 'execute') {
          const [ticket] = awaitingExecution.splice(choice % awaitingExecution.length, 1) as [CommitTicket]
          const fails = failures[step % Math.max(1, failures.length)] ?? false
          if (fails) {
            awaitingReply.push({ ticket, version: null })
          } else {
            version++
            successes.push(version)
            awaitingReply.push({ ticket, version })
          }
        } else {
          const [reply] = awaitingReply.splice(choice % awaitingReply.length, 1) as [{ ticket: CommitTicket, version: number | null }]
          sequencer.finish(reply.ticket, reply.version === null ? null : change(reply.version))
        }
      }
      expect(released).toEqual(successes)
    }), { seed: 20261121, numRuns: 300 })
  })
})
