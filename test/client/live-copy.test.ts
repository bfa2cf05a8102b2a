// The live copy's ordering rules, driven with hand-made acks and events: in-order changes
// apply, duplicates are ignored, a gap or an event that does not apply forces a new
// snapshot, and events that arrive before the snapshot are replayed after it.
import { describe, expect, it } from 'vitest'
import type { ChangeEvent, SubscribeAck } from '../../shared/events.js'
import { ContentdClientError } from '../../shared/client/errors.js'
import { LiveCopy } from '../../shared/client/subscription.js'

const change = (version: number, op: ChangeEvent['op'], path: string | undefined, value?: unknown): ChangeEvent =>
  ({ project: '@alice/demo', version, op, ...(path === undefined ? {} : { path }), ...(value === undefined ? {} : { value: value as never }), at: new Date().toISOString(), actor: { type: 'user', name: '@alice' } })

/** A requester whose acks the test releases one by one. */
function controlledRequester () {
  const pending: Array<(ack: SubscribeAck) => void> = []
  return {
    requests: () => pending.length,
    request: () => new Promise<SubscribeAck>(resolve => { pending.push(resolve) }),
    answer (index: number, ack: SubscribeAck) { (pending[index] as (ack: SubscribeAck) => void)(ack) }
  }
}

const flush = () => new Promise(resolve => setImmediate(resolve))

describe('LiveCopy', () => {
  it('applies changes in version order and ignores duplicates', async () => {
    const requester = controlledRequester()
    const seen: number[] = []
    const copy = new LiveCopy('@alice/demo', (_c, v) => seen.push(v), {}, requester.request, () => {})
    copy.resync()
    requester.answer(0, { ok: true, project: '@alice/demo', version: 3, content: { n: 1 } })
    await copy.ready
    copy.receive(change(4, 'increment', 'n', 2))
    copy.receive(change(4, 'increment', 'n', 2)) // duplicate
    copy.receive(change(3, 'set', 'n', 100)) // already in the snapshot
    copy.receive(change(5, 'push', 'list', 'a'))
    expect(copy.content).toEqual({ n: 3, list: ['a'] })
    expect(copy.version).toBe(5)
    expect(seen).toEqual([3, 4, 5])
    expect(requester.requests()).toBe(1)
  })

  it('two copies fed the same acknowledgement and change events keep documents of their own', async () => {
    const ack: SubscribeAck = { ok: true, project: '@alice/demo', version: 1, content: { a: { n: 1 } } }
    const copies = [0, 1].map(() => new LiveCopy('@alice/demo', () => {}, {}, async () => ack, () => {}))
    for (const copy of copies) copy.resync()
    await Promise.all(copies.map(copy => copy.ready))
    const changes = [
      change(2, 'increment', 'a.n', 1),
      change(3, 'set', 'b', { x: 1 }),
      change(4, 'increment', 'b.x', 1),
      change(5, 'update', undefined, { u: { k: 1 } }),
      change(6, 'increment', 'u.k', 1)
    ]
    for (const c of changes) for (const copy of copies) copy.receive(c)
    for (const copy of copies) expect(copy.content).toEqual({ u: { k: 2 } })
    expect(ack).toMatchObject({ content: { a: { n: 1 } } })
  })

  it('asks again after `retryAfter` when the snapshot is refused as RATE_LIMITED, holding changes back meanwhile', async () => {
    const requester = controlledRequester()
    const copy = new LiveCopy('@alice/demo', () => {}, {}, requester.request, () => {})
    copy.resync()
    const asked = Date.now()
    requester.answer(0, { ok: false, code: 'RATE_LIMITED', message: 'Too many requests; retry later', retryAfter: 1 })
    await flush()
    expect(requester.requests()).toBe(1)
    while (requester.requests() < 2) await new Promise(resolve => setTimeout(resolve, 20))
    expect(Date.now() - asked).toBeGreaterThanOrEqual(990)
    copy.receive(change(5, 'increment', 'n', 1))
    requester.answer(1, { ok: true, project: '@alice/demo', version: 4, content: { n: 1 } })
    await copy.ready
    expect(copy.content).toEqual({ n: 2 })
    expect(copy.version).toBe(5)
  })

  it('re-subscribes on a gap and takes the new snapshot', async () => {
    const requester = controlledRequester()
    const copy = new LiveCopy('@alice/demo', () => {}, {}, requester.request, () => {})
    copy.resync()
    requester.answer(0, { ok: true, project: '@alice/demo', version: 1, content: { n: 1 } })
    await copy.ready
    copy.receive(change(3, 'set', 'n', 9)) // version 2 is missing
    expect(requester.requests()).toBe(2)
    // Changes during the re-subscription are held back, then replayed after the snapshot.
    copy.receive(change(4, 'increment', 'n', 1))
    requester.answer(1, { ok: true, project: '@alice/demo', version: 3, content: { n: 9 } })
    await flush()
    expect(copy.content).toEqual({ n: 10 })
    expect(copy.version).toBe(4)
    expect(copy.snapshots).toBe(2)
  })

  it('re-subscribes when a change cannot be applied to the copy', async () => {
    const requester = controlledRequester()
    const copy = new LiveCopy('@alice/demo', () => {}, {}, requester.request, () => {})
    copy.resync()
    requester.answer(0, { ok: true, project: '@alice/demo', version: 1, content: { s: 'text' } })
    await copy.ready
    copy.receive(change(2, 'increment', 's', 1))
    expect(requester.requests()).toBe(2)
    expect(copy.content).toEqual({ s: 'text' })
  })

  it('ignores an acknowledgement that a newer request superseded', async () => {
    const requester = controlledRequester()
    const copy = new LiveCopy('@alice/demo', () => {}, {}, requester.request, () => {})
    copy.resync()
    copy.resync()
    requester.answer(1, { ok: true, project: '@alice/demo', version: 7, content: { fresh: true } })
    requester.answer(0, { ok: true, project: '@alice/demo', version: 2, content: { stale: true } })
    await flush()
    expect(copy.content).toEqual({ fresh: true })
    expect(copy.version).toBe(7)
  })

  it('fails with a typed error when refused, and stops', async () => {
    const requester = controlledRequester()
    const errors: ContentdClientError[] = []
    let closed = 0
    const copy = new LiveCopy('@alice/demo', () => {}, { onError: e => errors.push(e) }, requester.request, () => { closed++ })
    copy.resync()
    requester.answer(0, { ok: false, code: 'FORBIDDEN', message: 'You do not have access to this project' })
    await expect(copy.ready).rejects.toMatchObject({ status: 403, code: 'FORBIDDEN' })
    expect(errors).toHaveLength(1)
    expect(errors[0]).toBeInstanceOf(ContentdClientError)
    expect(closed).toBe(1)
    copy.receive(change(1, 'set', 'a', 1))
    expect(copy.content).toBeUndefined()
  })
})
