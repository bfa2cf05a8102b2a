// The budget of unsent bytes that SSE streams and Socket.IO connections share
// (server/services/unsent-budget.ts, docs/design.md §13b): per user and per process, the
// streams holding the most are closed first, only as many as needed, never for bytes that
// were already sent, and never another user's for a user's excess.
import { describe, expect, it } from 'vitest'
import { UnsentBudget, type BudgetScope, type UnsentHolder } from '../../server/services/unsent-budget.js'

class FakeStream implements UnsentHolder {
  bytes = 0
  closed: { unsentBytes: number, scope: BudgetScope } | null = null
  constructor (readonly userId: string, readonly name: string) {}
  unsent (): number { return this.bytes }
  close (unsentBytes: number, scope: BudgetScope): void { this.closed = { unsentBytes, scope } }
}

const KIB = 1024

function setUp (perUser: number, perProcess: number, streams: Array<[string, string]>) {
  const budget = new UnsentBudget({ perUser, perProcess })
  const all = streams.map(([user, name]) => new FakeStream(user, name))
  for (const stream of all) budget.add(stream)
  // As the end of the turn would (the budget counts then): settle at once.
  const write = (stream: FakeStream, bytes: number) => { stream.bytes += bytes; budget.noted(stream); budget.settle() }
  return { budget, all, write }
}

describe('UnsentBudget', () => {
  it('past the per-user budget, that user\'s streams holding the most are closed until it is met; another user\'s stay', () => {
    const { budget, all: [a1, a2, a3, b1], write } = setUp(100 * KIB, 1 << 30, [['alice', 'a1'], ['alice', 'a2'], ['alice', 'a3'], ['bob', 'b1']])
    write(b1!, 90 * KIB)
    write(a1!, 30 * KIB)
    write(a2!, 60 * KIB)
    expect([a1, a2, a3, b1].map(s => s!.closed)).toEqual([null, null, null, null])
    write(a3!, 20 * KIB) // alice: 110 KiB
    expect(a2!.closed).toEqual({ unsentBytes: 60 * KIB, scope: 'user' })
    expect([a1, a3, b1].map(s => s!.closed)).toEqual([null, null, null])
    expect(budget.unsentBytes).toBe(140 * KIB)
    expect(budget.streams).toBe(3)
    // A closed stream is no longer counted, whatever it reports.
    write(a2!, 1 << 20)
    expect(budget.unsentBytes).toBe(140 * KIB)
  })

  it('bytes sent since a stream last wrote are not held against anyone: the budget counts afresh before closing', () => {
    const { all: [a1, a2], write } = setUp(100 * KIB, 1 << 30, [['alice', 'a1'], ['alice', 'a2']])
    write(a1!, 90 * KIB)
    a1!.bytes = 0 // its client read everything, without a write to say so
    write(a2!, 90 * KIB)
    expect([a1!.closed, a2!.closed]).toEqual([null, null])
  })

  it('past the per-process budget, the largest streams of any user are closed', () => {
    const { all: [a1, b1, c1], write } = setUp(1 << 30, 200 * KIB, [['alice', 'a1'], ['bob', 'b1'], ['carol', 'c1']])
    write(a1!, 50 * KIB)
    write(b1!, 120 * KIB)
    write(c1!, 40 * KIB)
    expect(b1!.closed).toEqual({ unsentBytes: 120 * KIB, scope: 'process' })
    expect([a1!.closed, c1!.closed]).toEqual([null, null])
  })

  it('counts at the end of the turn, not at the write: bytes a stream hands on within the turn are not held against it', async () => {
    const budget = new UnsentBudget({ perUser: 100 * KIB, perProcess: 1 << 30 })
    const streams = Array.from({ length: 5 }, (_, i) => new FakeStream('alice', `a${i}`))
    for (const stream of streams) budget.add(stream)
    // Each is given 60 KiB, as one change to five fast readers; the kernel takes it before the turn ends.
    for (const stream of streams) { stream.bytes = 60 * KIB; budget.noted(stream) }
    for (const stream of streams) stream.bytes = 0
    await new Promise(resolve => setImmediate(resolve))
    expect(streams.map(s => s.closed)).toEqual([null, null, null, null, null])
    // Five that keep it: closed down to the budget at the end of the turn, largest first.
    streams.forEach((stream, i) => { stream.bytes = (40 + i) * KIB; budget.noted(stream) })
    await new Promise(resolve => setImmediate(resolve))
    expect(streams.map(s => s.closed !== null)).toEqual([false, false, true, true, true])
  })

  it('a stream that stops being counted gives its bytes back', () => {
    const budget = new UnsentBudget({ perUser: 100 * KIB, perProcess: 1 << 30 })
    const a1 = new FakeStream('alice', 'a1')
    const a2 = new FakeStream('alice', 'a2')
    const stop = budget.add(a1)
    budget.add(a2)
    a1.bytes = 90 * KIB
    budget.noted(a1)
    budget.settle()
    stop()
    expect(budget.unsentBytes).toBe(0)
    a2.bytes = 90 * KIB
    budget.noted(a2)
    budget.settle()
    expect(a2.closed).toBeNull()
  })
})
