// Delivers each webhook's changes (docs/design.md §11): at least once, in version order per
// webhook, driven by the change log. Every node runs one dispatcher; for each webhook with
// changes past its durable cursor, a node takes the webhook's lease in the store, reads the
// log after the cursor, skips what the filters leave out, POSTs the next matching entry and
// records the outcome fenced by its lease: a 2xx within 10 s moves the cursor past it, a
// failure schedules a retry (1 s doubling to 1 h) and, after 3 days of failures, disables
// the webhook. Entries that left the retained history first are reported as lost.
//
// Nothing here is on the write path: a commit to a project with webhooks only schedules a
// scan, and a commit to any other project does nothing here (hooked-projects.ts). Each
// webhook is worked on by its own task, so a slow or dead receiver holds up only its own webhook.
import { isContentdError } from '../../shared/errors.js'
import type { ChangeEntry } from '../../shared/events.js'
import { DISABLE_AFTER_MS, DELIVERY_TIMEOUT_MS, retryDelayMs, webhookMatches } from '../../shared/webhooks.js'
import { newId } from '../auth/tokens.js'
import { systemClock, type Clock } from '../clock.js'
import type { Logger } from '../logger.js'
import { wireOf, rememberWire } from '../feed/wire.js'
import { projectMemberOf } from '../store/change-pages.js'
import type { ChangesPage, ProjectRecord, Store } from '../store/types.js'
import type { DeliveryRecord, WebhookProgress, WebhookRecord } from '../store/webhook-types.js'
import type { WebhookMetrics } from './metrics.js'
import { REFRESH_MS, type HookedProjects } from './hooked-projects.js'
import type { RecentChanges } from './recent-changes.js'
import type { SecretBox } from './secret-box.js'
import { sendWebhook } from './sender.js'
import type { Resolver } from './target-policy.js'

/** Entries read from the log per look. */
const PAGE_SIZE = 100
/** Webhooks started per scan. */
const SCAN_LIMIT = 100

export interface DispatcherOptions {
  store: Store
  secrets: SecretBox
  /** WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate: boolean
  logger: Logger
  metrics?: WebhookMetrics
  /** Tests move time with a manual clock (retries, disabling after 3 days). */
  now?: Clock
  /** How often to look for work other nodes committed and retries that came due. */
  pollIntervalMs?: number
  /** How long a claimed webhook stays this node's without renewal; longer than an attempt. */
  leaseMs?: number
  resolve?: Resolver
  /**
   * The change feed's recent changes (recent-changes.ts): entries found there are not parsed
   * from the log nor serialized again. Without it (tests, the CLI) entries come from the log.
   */
  recent?: RecentChanges
  /**
   * The projects with webhooks (hooked-projects.ts), which `recent` keeps changes of: loaded
   * when deliveries start and every REFRESH_MS, and told of every project the poll finds due.
   */
  hooked?: HookedProjects
}

const iso = (ms: number) => new Date(ms).toISOString()

/** webhook-id: the same for every attempt at one change of one webhook. */
export const messageIdOf = (webhookId: string, version: number) => `msg_${webhookId}_${version}`

export class WebhookDispatcher {
  /** This process's name in leases: a restarted node is a new holder. */
  readonly nodeId = newId('node_')
  private readonly working = new Map<string, Promise<void>>()
  private readonly now: Clock
  private readonly leaseMs: number
  private readonly stopping = new AbortController()
  private timer: NodeJS.Timeout | undefined
  private refreshTimer: NodeJS.Timeout | undefined
  private scanPending = false
  private scanning: Promise<void> | null = null
  private rescan = false
  private stopListening: (() => void) | null = null

  constructor (private readonly options: DispatcherOptions) {
    this.now = options.now ?? systemClock
    this.leaseMs = options.leaseMs ?? DELIVERY_TIMEOUT_MS * 3
  }

  start (): void {
    // A change to a project with webhooks, this node's or another's, may be work for one.
    if (this.options.recent) this.stopListening = this.options.recent.onChange(() => this.wake())
    else this.options.store.onCommit(() => this.wake())
    this.timer = setInterval(() => this.wake(), this.options.pollIntervalMs ?? 1000)
    this.timer.unref()
    const { hooked } = this.options
    if (hooked) {
      // Loaded, then looked for work: changes made meanwhile were not kept, so not woken for.
      const load = () => hooked.load().then(() => this.wake(), (e: unknown) => this.options.logger.warn({ err: e }, 'reading the projects with webhooks failed; trying again later'))
      void load()
      this.refreshTimer = setInterval(() => { void load() }, REFRESH_MS)
      this.refreshTimer.unref()
    }
    this.wake()
  }

  /** Stops looking for work and abandons attempts in flight (unrecorded: they are sent again). */
  async stop (): Promise<void> {
    clearInterval(this.timer)
    clearInterval(this.refreshTimer)
    this.stopListening?.()
    this.stopping.abort()
    await this.scanning
    await Promise.all(this.working.values())
  }

  /** Looks for work soon; calls made while a look is pending or running share one more look. */
  wake (): void {
    if (this.stopping.signal.aborted) return
    if (this.scanning) { this.rescan = true; return }
    if (this.scanPending) return
    this.scanPending = true
    setImmediate(() => {
      this.scanPending = false
      this.scanning = this.scan().catch((e: unknown) => this.options.logger.error({ err: e }, 'webhook scan failed')).finally(() => {
        this.scanning = null
        if (this.rescan) { this.rescan = false; this.wake() }
      })
    })
  }

  private async scan (): Promise<void> {
    const { store } = this.options
    const listed = await store.webhooks.listDue(iso(this.now()), SCAN_LIMIT)
    // A webhook made where this node did not hear of it (the CLI, a lost relay message).
    for (const w of listed) this.options.hooked?.add(w.projectId)
    const due = listed.filter(w => !this.working.has(w.id))
    if (due.length === 0) return
    const projects = new Map((await store.findProjectsByIds([...new Set(due.map(w => w.projectId))])).map(p => [p.id, p]))
    for (const webhook of due) {
      const project = projects.get(webhook.projectId)
      if (!project) continue
      this.options.metrics?.lag.set({ webhook: webhook.id }, Math.max(0, project.version - webhook.cursor))
      if (project.version <= webhook.cursor || this.stopping.signal.aborted) continue
      const task = this.work(webhook.id, project)
        .catch((e: unknown) => this.options.logger.error({ err: e, webhook: webhook.id }, 'webhook delivery failed unexpectedly'))
        .finally(() => this.working.delete(webhook.id))
      this.working.set(webhook.id, task)
    }
  }

  private leaseUntil (): string {
    return iso(this.now() + this.leaseMs)
  }

  private async work (id: string, project: ProjectRecord): Promise<void> {
    const { store } = this.options
    const claimed = await store.webhooks.claim(id, this.nodeId, iso(this.now()), this.leaseUntil())
    if (!claimed) return
    try {
      await this.deliverPending(claimed, project)
    } finally {
      await store.webhooks.release(id, this.nodeId).catch(() => undefined)
    }
  }

  /** Sends what is pending, in order, until it is all sent, an attempt fails, or the lease is lost. */
  private async deliverPending (claimed: WebhookRecord, project: ProjectRecord): Promise<void> {
    let hook: WebhookRecord | null = claimed
    while (hook !== null && !this.stopping.signal.aborted) {
      if (hook.nextAttemptAt !== null && hook.nextAttemptAt > iso(this.now())) return
      let page
      try {
        page = await this.readPage(project, hook.cursor)
      } catch (e) {
        if (isContentdError(e) && e.code === 'HISTORY_EXPIRED') { hook = await this.reportLost(hook, project); continue }
        if (isContentdError(e) && e.code === 'PROJECT_NOT_FOUND') return
        throw e
      }
      this.options.metrics?.lag.set({ webhook: hook.id }, Math.max(0, page.version - hook.cursor))
      const next = page.changes.find(entry => webhookMatches(entry, hook!.paths, hook!.ops))
      if (next === undefined) {
        const last = page.changes.at(-1)
        if (last === undefined) return
        // Nothing on this page is for this webhook: the cursor moves past it.
        hook = await this.record(hook, { cursor: last.version }, [])
        continue
      }
      hook = await this.attempt(hook, next)
      if (hook !== null && hook.failures > 0) return
    }
  }

  /**
   * The log's entries after `cursor`, as readChanges reads them (same order, same retention
   * errors); each taken from the feed's recent changes when held there, else parsed from the
   * stored text, which is then its wire form too: no serialization either way.
   */
  private async readPage (project: ProjectRecord, cursor: number): Promise<ChangesPage> {
    const { store, recent } = this.options
    if (!recent) return store.readChanges(project, cursor, PAGE_SIZE)
    const page = await store.readChangesJson(project, cursor, PAGE_SIZE)
    const opening = '{' + projectMemberOf(page.project)
    const changes = page.entries.map(stored => {
      const held = recent.get(project.id, stored.version)
      if (held) return held
      const json = opening + stored.stored.toString('utf8', 1)
      const entry = JSON.parse(json) as ChangeEntry
      rememberWire(entry, json)
      return entry
    })
    return { version: page.version, changes, more: page.more }
  }

  /** One attempt at `entry`; the entries between the cursor and it were filtered out. */
  private async attempt (hook: WebhookRecord, entry: ChangeEntry): Promise<WebhookRecord | null> {
    const attempt = hook.failures + 1
    let result
    try {
      result = await sendWebhook({
        url: hook.url,
        secret: this.options.secrets.open(hook.secretCiphertext, hook.id),
        messageId: messageIdOf(hook.id, entry.version),
        // The change's one wire form: the feed's, or the log's text (readPage).
        payload: wireOf(entry),
        now: this.now(),
        allowPrivate: this.options.allowPrivate,
        signal: this.stopping.signal,
        ...(this.options.resolve ? { resolve: this.options.resolve } : {})
      })
    } catch (e) {
      result = { ok: false, status: null, error: e instanceof Error ? e.message : String(e), durationMs: 0 }
    }
    // Stopping: the attempt is not recorded, and is made again by whichever node goes on.
    if (this.stopping.signal.aborted) return null
    const now = this.now()
    const delivery: DeliveryRecord = {
      version: entry.version, status: result.status, outcome: result.ok ? 'delivered' : 'failed', attempt, error: result.error, at: iso(now), durationMs: result.durationMs
    }
    this.options.metrics?.deliveries.inc({ outcome: delivery.outcome })
    if (result.ok) return this.record(hook, { cursor: entry.version }, [delivery])
    const failingSince = hook.failingSince ?? iso(now)
    const progress: Partial<WebhookProgress> = { cursor: entry.version - 1, failures: attempt, failingSince, nextAttemptAt: iso(now + retryDelayMs(attempt)) }
    if (now - Date.parse(failingSince) >= DISABLE_AFTER_MS) {
      progress.nextAttemptAt = null
      progress.disabledAt = iso(now)
      progress.disabledReason = `Disabled at ${iso(now)}: every attempt since ${failingSince} failed (3 days); the last at version ${entry.version}: ${result.error ?? 'failed'}`
      this.options.logger.warn({ webhook: hook.id }, 'webhook disabled after failing for 3 days')
    }
    return this.record(hook, progress, [delivery])
  }

  /**
   * The entries after the cursor are no longer all kept (HISTORY_LIMIT): finds the oldest
   * version the log still answers from (a binary search; rare), reports the versions up to
   * it as lost and moves the cursor there.
   */
  private async reportLost (hook: WebhookRecord, project: ProjectRecord): Promise<WebhookRecord | null> {
    const { store } = this.options
    const current = (await store.findProjectsByIds([project.id]))[0]
    if (!current) return null
    let low = hook.cursor + 1
    let high = current.version
    while (low < high) {
      const middle = Math.floor((low + high) / 2)
      const answerable = await store.readChanges(project, middle, 1).then(() => true, (e: unknown) => {
        if (isContentdError(e) && e.code === 'HISTORY_EXPIRED') return false
        throw e
      })
      if (answerable) high = middle
      else low = middle + 1
    }
    const from = hook.cursor + 1
    const lost: DeliveryRecord = {
      version: low, status: null, outcome: 'lost', attempt: 0, at: iso(this.now()), durationMs: 0,
      error: `${from === low ? `version ${low}` : `versions ${from}–${low}`} left the retained history (HISTORY_LIMIT) before delivery; not sent`
    }
    this.options.metrics?.deliveries.inc({ outcome: 'lost' }, low - from + 1)
    this.options.logger.warn({ webhook: hook.id, from, to: low }, 'webhook changes lost: they left the history before delivery')
    return this.record(hook, { cursor: low, failures: 0, failingSince: null, nextAttemptAt: null }, [lost])
  }

  /** Records progress under the lease (renewing it); null when another node took it over. */
  private async record (hook: WebhookRecord, change: Partial<WebhookProgress>, deliveries: DeliveryRecord[]): Promise<WebhookRecord | null> {
    const progress: WebhookProgress = {
      cursor: hook.cursor, failures: 0, failingSince: null, nextAttemptAt: null, disabledAt: null, disabledReason: null, ...change
    }
    const kept = await this.options.store.webhooks.record(hook.id, this.nodeId, progress, deliveries, this.leaseUntil())
    if (!kept) return null
    return progress.disabledAt === null ? { ...hook, ...progress } : null
  }
}
