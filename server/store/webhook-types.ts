// What a store keeps for webhooks (docs/design.md §11): each webhook with its durable cursor,
// retry state and lease, and its last deliveries. Every store implements WebhookStore (as
// `store.webhooks`); the store contract suite holds them to the same behaviour.
//
// The lease makes one node at a time work on a webhook: a node claims it (free, expired or
// already its own) before reading what to send, and every state change it records is fenced
// by the lease, so a node that lost it (paused past its expiry) cannot move the cursor.

import type { PageRequest } from './types.js'

export interface WebhookRecord {
  id: string
  projectId: string
  url: string
  paths: string[] | null
  ops: string[] | null
  description: string | null
  /** The signing secret, encrypted with a key kept outside the store (secret-box.ts). */
  secretCiphertext: string
  createdAt: string
  /** Every version up to this one is delivered, skipped by the filters, or reported lost. */
  cursor: number
  /** Consecutive failed attempts at the change after the cursor. */
  failures: number
  failingSince: string | null
  nextAttemptAt: string | null
  disabledAt: string | null
  disabledReason: string | null
  leaseOwner: string | null
  leaseUntil: string | null
}

export interface DeliveryRecord {
  version: number
  status: number | null
  outcome: 'delivered' | 'failed' | 'lost'
  attempt: number
  error: string | null
  at: string
  durationMs: number
}

/** The state an attempt (or a run of skipped or lost changes) leaves a webhook in. */
export interface WebhookProgress {
  cursor: number
  failures: number
  failingSince: string | null
  nextAttemptAt: string | null
  disabledAt: string | null
  disabledReason: string | null
}

/** Webhooks are listed oldest first: by creation time, then id (as keys are). */
export interface WebhookPosition { createdAt: string, id: string }

export interface WebhookStore {
  /**
   * Adds the webhook unless its project already has `maxPerProject`: then QUOTA_EXCEEDED,
   * nothing added. Counting and adding are one atomic step (as for createApiKey), so
   * concurrent creates at the limit, from any number of processes, cannot both pass
   * (MAX_WEBHOOKS_PER_PROJECT, docs/design.md §13b). Without it there is no limit.
   */
  create (webhook: WebhookRecord, maxPerProject?: number): Promise<void>
  find (id: string): Promise<WebhookRecord | null>
  /** One page of the project's webhooks, oldest first, after `page.after`: one query. */
  list (projectId: string, page: PageRequest<WebhookPosition>): Promise<WebhookRecord[]>
  /** Removes the webhook and its deliveries; false when the project has no webhook with that id. */
  delete (projectId: string, id: string): Promise<boolean>
  /**
   * Enabled webhooks with work at `now`: their project's version beyond the cursor, no retry
   * pending after `now`, lease free or expired. At most `limit`, soonest due first (so idle
   * webhooks never crowd out ones with work).
   */
  listDue (now: string, limit: number): Promise<WebhookRecord[]>
  /**
   * The ids of the projects that have at least one webhook, enabled or not, in no order: the
   * dispatcher keeps changes only for these (server/webhooks/hooked-projects.ts). One query,
   * through the by-project index; at most one id per project.
   */
  projectIds (): Promise<string[]>
  /**
   * Takes or renews the lease until `until` when it is free, expired at `now` or already
   * `owner`'s, and the webhook is enabled. Resolves with the webhook as stored (the current
   * cursor), or null when another node holds it, it is disabled or gone.
   */
  claim (id: string, owner: string, now: string, until: string): Promise<WebhookRecord | null>
  /** Gives the lease up (only `owner`'s). */
  release (id: string, owner: string): Promise<void>
  /**
   * Records progress and, atomically with it, the deliveries (oldest first; the newest
   * DELIVERIES_KEPT are kept) — only while `owner` holds the lease, which is renewed until
   * `until`. Resolves false (recording nothing) when the lease was lost.
   */
  record (id: string, owner: string, progress: WebhookProgress, deliveries: DeliveryRecord[], until: string): Promise<boolean>
  /** The newest deliveries first, at most DELIVERIES_KEPT. */
  deliveries (id: string): Promise<DeliveryRecord[]>
}
