// The store contract for webhooks (docs/design.md §11): storage, the durable cursor, the
// lease that makes one node at a time deliver, and the capped deliveries list. Called from
// test/store-contract/webhooks.test.ts inside its per-store describe, so every store runs it.
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { ContentdError } from '../../shared/errors.js'
import type { ProjectRecord, Store } from '../../server/store/types.js'
import type { DeliveryRecord, WebhookProgress, WebhookRecord } from '../../server/store/webhook-types.js'

export interface WebhookContractContext {
  store: () => Store
  newProject: () => Promise<ProjectRecord>
}

const T0 = Date.parse('2030-01-01T00:00:00.000Z')
const at = (ms: number) => new Date(T0 + ms).toISOString()

function webhookRecord (projectId: string, overrides: Partial<WebhookRecord> = {}): WebhookRecord {
  return {
    id: 'whk_' + randomUUID(), projectId, url: 'https://203.0.113.10/hook', paths: ['site'], ops: ['set'], description: 'd',
    secretCiphertext: 'v1.sealed', createdAt: at(0), cursor: 0, failures: 0, failingSince: null, nextAttemptAt: null,
    disabledAt: null, disabledReason: null, leaseOwner: null, leaseUntil: null, ...overrides
  }
}

/** A page big enough for every list of this suite. */
const ALL = { after: null, limit: 1000 }

const delivery = (version: number, overrides: Partial<DeliveryRecord> = {}): DeliveryRecord =>
  ({ version, status: 204, outcome: 'delivered', attempt: 1, error: null, at: at(version), durationMs: 3, ...overrides })

const progress = (overrides: Partial<WebhookProgress> = {}): WebhookProgress =>
  ({ cursor: 0, failures: 0, failingSince: null, nextAttemptAt: null, disabledAt: null, disabledReason: null, ...overrides })

export function webhookContract ({ store, newProject }: WebhookContractContext): void {
  describe('webhooks (docs/design.md §11)', () => {
    const hooks = () => store().webhooks
    const dueIds = async (now: number) => (await hooks().listDue(at(now), 1000)).map(w => w.id)

    it('creates, finds, lists by project (oldest first) and deletes only within the project', async () => {
      const project = await newProject()
      const other = await newProject()
      const first = webhookRecord(project.id, { createdAt: at(1) })
      const second = webhookRecord(project.id, { createdAt: at(2), paths: null, ops: null, description: null })
      await hooks().create(second)
      await hooks().create(first)
      expect(await hooks().find(first.id)).toEqual(first)
      expect(await hooks().list(project.id, ALL)).toEqual([first, second])
      expect(await hooks().list(other.id, ALL)).toEqual([])
      expect(await hooks().delete(other.id, first.id)).toBe(false)
      expect(await hooks().delete(project.id, first.id)).toBe(true)
      expect(await hooks().find(first.id)).toBeNull()
      expect(await hooks().delete(project.id, first.id)).toBe(false)
    })

    it('names each project with a webhook once, disabled ones too, and forgets a project whose last webhook is deleted', async () => {
      const [two, disabled, none] = [await newProject(), await newProject(), await newProject()]
      const first = webhookRecord(two.id)
      await hooks().create(first)
      await hooks().create(webhookRecord(two.id, { createdAt: at(1) }))
      await hooks().create(webhookRecord(disabled.id, { disabledAt: at(2), disabledReason: 'failing' }))
      // Other suites' projects share the store: only these three are looked at.
      const mine = async () => (await hooks().projectIds()).filter(id => [two.id, disabled.id, none.id].includes(id)).sort()
      expect(await mine()).toEqual([two.id, disabled.id].sort())
      expect(await hooks().delete(two.id, first.id)).toBe(true)
      expect(await mine(), 'one webhook left').toEqual([two.id, disabled.id].sort())
      const [left] = await hooks().list(two.id, ALL)
      expect(await hooks().delete(two.id, left!.id)).toBe(true)
      expect(await mine()).toEqual([disabled.id])
    })

    it('lists a page at a time, oldest first, by (createdAt, id), reading no more than the page', async () => {
      const project = await newProject()
      // Two share a creation time: the id breaks the tie.
      const made = [at(3), at(1), at(2), at(2), at(5)].map(createdAt => webhookRecord(project.id, { createdAt }))
      for (const w of made) await hooks().create(w)
      const expected = [...made].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map(w => w.id)
      const seen: string[] = []
      let after: { createdAt: string, id: string } | null = null
      for (let pages = 0; pages < 10; pages++) {
        const page: WebhookRecord[] = await hooks().list(project.id, { after, limit: 2 })
        expect(page.length).toBeLessThanOrEqual(2)
        seen.push(...page.map(w => w.id))
        if (page.length < 2) break
        const last = page[page.length - 1] as WebhookRecord
        after = { createdAt: last.createdAt, id: last.id }
      }
      expect(seen).toEqual(expected)
    })

    it('refuses a webhook beyond maxPerProject with QUOTA_EXCEEDED, adding nothing; a delete frees a slot', async () => {
      const project = await newProject()
      const other = await newProject()
      const first = webhookRecord(project.id)
      await hooks().create(first, 2)
      await hooks().create(webhookRecord(project.id), 2)
      const refused = webhookRecord(project.id)
      await expect(hooks().create(refused, 2)).rejects.toSatisfy((e: unknown) => e instanceof ContentdError && e.code === 'QUOTA_EXCEEDED')
      expect(await hooks().find(refused.id)).toBeNull()
      expect(await hooks().list(project.id, ALL)).toHaveLength(2)
      // Another project's quota is its own.
      await hooks().create(webhookRecord(other.id), 2)
      expect(await hooks().delete(project.id, first.id)).toBe(true)
      await hooks().create(webhookRecord(project.id), 2)
      await expect(hooks().create(webhookRecord(project.id), 2)).rejects.toSatisfy((e: unknown) => e instanceof ContentdError && e.code === 'QUOTA_EXCEEDED')
    })

    it('lets exactly maxPerProject of 12 simultaneous creates through', async () => {
      const project = await newProject()
      const outcomes = await Promise.allSettled(Array.from({ length: 12 }, () => hooks().create(webhookRecord(project.id), 5)))
      expect(outcomes.filter(o => o.status === 'fulfilled')).toHaveLength(5)
      for (const o of outcomes) if (o.status === 'rejected') expect((o.reason as ContentdError).code).toBe('QUOTA_EXCEEDED')
      expect(await hooks().list(project.id, ALL)).toHaveLength(5)
    })

    it('deleting a project deletes its webhooks', async () => {
      const project = await newProject()
      const hook = webhookRecord(project.id)
      await hooks().create(hook)
      await store().deleteProject(project.id)
      expect(await hooks().find(hook.id)).toBeNull()
      expect(await hooks().list(project.id, ALL)).toEqual([])
    })

    it('lists as due the enabled webhooks with changes pending, no retry in the future and no live lease', async () => {
      const project = await newProject()
      await store().applyOperation(project, { op: 'set', path: ['a'], value: 1 }, { actor: { type: 'user', name: '@contract-suite' } })
      const ready = webhookRecord(project.id)
      const retryLater = webhookRecord(project.id, { nextAttemptAt: at(5000) })
      const retryDue = webhookRecord(project.id, { nextAttemptAt: at(500) })
      const disabled = webhookRecord(project.id, { disabledAt: at(0), disabledReason: 'x' })
      const leased = webhookRecord(project.id, { leaseOwner: 'node_a', leaseUntil: at(5000) })
      const leaseExpired = webhookRecord(project.id, { leaseOwner: 'node_a', leaseUntil: at(500) })
      const upToDate = webhookRecord(project.id, { cursor: 1 })
      for (const w of [ready, retryLater, retryDue, disabled, leased, leaseExpired, upToDate]) await hooks().create(w)
      const due = await dueIds(1000)
      expect(due).toEqual(expect.arrayContaining([ready.id, retryDue.id, leaseExpired.id]))
      for (const id of [retryLater.id, disabled.id, leased.id, upToDate.id]) expect(due).not.toContain(id)
      expect((await hooks().listDue(at(1000), 1000)).find(w => w.id === ready.id), 'listed as stored').toEqual(ready)
      expect(await dueIds(6000)).toEqual(expect.arrayContaining([retryLater.id, leased.id]))
    })

    it('leases a webhook to one owner at a time until it expires; the owner renews and releases it', async () => {
      const project = await newProject()
      const hook = webhookRecord(project.id, { cursor: 7 })
      await hooks().create(hook)
      const claimed = await hooks().claim(hook.id, 'node_a', at(0), at(30_000))
      expect(claimed).toMatchObject({ id: hook.id, cursor: 7, leaseOwner: 'node_a', leaseUntil: at(30_000) })
      expect(await hooks().claim(hook.id, 'node_b', at(29_999), at(59_999)), 'held by node_a').toBeNull()
      expect(await hooks().claim(hook.id, 'node_a', at(10_000), at(40_000)), 'renewed by its owner').toMatchObject({ leaseUntil: at(40_000) })
      expect(await hooks().claim(hook.id, 'node_b', at(39_999), at(69_999))).toBeNull()
      expect(await hooks().claim(hook.id, 'node_b', at(40_000), at(70_000)), 'expired: node_b takes it').toMatchObject({ leaseOwner: 'node_b' })
      await hooks().release(hook.id, 'node_a')
      expect((await hooks().find(hook.id))?.leaseOwner, 'only the owner releases').toBe('node_b')
      await hooks().release(hook.id, 'node_b')
      expect(await hooks().find(hook.id)).toMatchObject({ leaseOwner: null, leaseUntil: null })
      expect(await hooks().claim('whk_missing', 'node_a', at(0), at(1))).toBeNull()
    })

    it('records progress and deliveries only under the lease, atomically, newest first, the last 100 kept', async () => {
      const project = await newProject()
      const hook = webhookRecord(project.id)
      await hooks().create(hook)
      expect(await hooks().record(hook.id, 'node_a', progress({ cursor: 1 }), [delivery(1)], at(30_000)), 'no lease: nothing recorded').toBe(false)
      expect(await hooks().find(hook.id)).toMatchObject({ cursor: 0 })
      expect(await hooks().deliveries(hook.id)).toEqual([])
      await hooks().claim(hook.id, 'node_a', at(0), at(30_000))
      const failing = progress({ cursor: 0, failures: 1, failingSince: at(1), nextAttemptAt: at(1001) })
      expect(await hooks().record(hook.id, 'node_a', failing, [delivery(1, { status: 500, outcome: 'failed', error: 'HTTP 500' })], at(31_000))).toBe(true)
      expect(await hooks().find(hook.id)).toMatchObject({ ...failing, leaseOwner: 'node_a', leaseUntil: at(31_000) })
      expect(await hooks().record(hook.id, 'node_b', progress({ cursor: 99 }), [delivery(99)], at(31_000)), 'another node: refused').toBe(false)
      for (let v = 1; v <= 104; v += 2) {
        expect(await hooks().record(hook.id, 'node_a', progress({ cursor: v + 1 }), [delivery(v), delivery(v + 1)], at(31_000))).toBe(true)
      }
      const list = await hooks().deliveries(hook.id)
      expect(list).toHaveLength(100)
      expect(list[0]).toEqual(delivery(104))
      expect(list.map(d => d.version)).toEqual(Array.from({ length: 100 }, (_, i) => 104 - i))
      expect(await hooks().find(hook.id)).toMatchObject({ cursor: 104, failures: 0, failingSince: null, nextAttemptAt: null })
    })

    it('a disabling record keeps the reason, ends the lease, and a disabled webhook cannot be claimed', async () => {
      const project = await newProject()
      const hook = webhookRecord(project.id)
      await hooks().create(hook)
      await hooks().claim(hook.id, 'node_a', at(0), at(30_000))
      const disabled = progress({ failures: 80, failingSince: at(0), disabledAt: at(259_200_000), disabledReason: 'failing for 3 days' })
      expect(await hooks().record(hook.id, 'node_a', disabled, [delivery(1, { status: null, outcome: 'failed', error: 'ECONNREFUSED', attempt: 80 })], at(30_000))).toBe(true)
      expect(await hooks().find(hook.id)).toMatchObject({ ...disabled, leaseOwner: null, leaseUntil: null })
      expect(await hooks().claim(hook.id, 'node_a', at(1), at(2))).toBeNull()
      expect(await hooks().deliveries(hook.id)).toEqual([delivery(1, { status: null, outcome: 'failed', error: 'ECONNREFUSED', attempt: 80 })])
    })
  })
}
