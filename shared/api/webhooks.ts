// Webhooks (docs/design.md §11): never their secret, except in the answer that creates one.
import { z } from 'zod'
import { isoTime, nextCursor } from './common.js'

const webhookFields = {
  id: z.string().meta({ description: 'whk_…' }),
  url: z.string(),
  paths: z.array(z.string()).nullable().meta({ description: 'Dot-path prefixes; null: every path' }),
  ops: z.array(z.string()).nullable().meta({ description: 'Operation names; null: every operation' }),
  createdAt: isoTime
}

export const webhook = z.object({
  ...webhookFields,
  description: z.string().nullable(),
  cursor: z.number().int().min(0).meta({ description: 'Every version up to this one is delivered, filtered out or reported lost' }),
  enabled: z.boolean().meta({ description: 'false once disabled after 3 days of failures' }),
  disabledReason: z.string().nullable(),
  failingSince: isoTime.nullable().meta({ description: 'Since when the pending change has failed; null when the last attempt succeeded' }),
  nextAttemptAt: isoTime.nullable()
}).meta({ description: 'A webhook, never with its secret.' })
export type WebhookView = z.infer<typeof webhook>

export const createdWebhook = z.object({ ...webhookFields, secret: z.string().meta({ description: 'The signing secret (whsec_…), shown only in this response' }) })
export type CreatedWebhook = z.infer<typeof createdWebhook>

/**
 * One attempt, or changes reported lost. `status` is the receiver's HTTP status, or null when
 * there was no answer (refused connection, timeout, forbidden address). `outcome` says what
 * it meant: delivered (2xx in time), failed (will be retried), lost (the change left the
 * retained history before it could be delivered: `version` is the newest lost one, `error`
 * names the range).
 */
export const delivery = z.object({
  version: z.number().int().min(1),
  status: z.number().int().nullable().meta({ description: "The receiver's HTTP status; null without an answer" }),
  outcome: z.enum(['delivered', 'failed', 'lost']).meta({ description: 'lost: the versions up to `version` left the retained history before delivery (see `error`)' }),
  attempt: z.number().int().min(0),
  error: z.string().optional(),
  at: isoTime,
  durationMs: z.number().int().min(0)
})
export type DeliveryView = z.infer<typeof delivery>

export const pingResult = z.object({ delivered: z.boolean(), status: z.number().int().nullable(), error: z.string().optional(), durationMs: z.number().int().min(0) })
export type PingResultView = z.infer<typeof pingResult>

export const WEBHOOK_RESPONSES = {
  NewWebhook: createdWebhook,
  WebhookList: z.object({ webhooks: z.array(webhook), nextCursor }),
  DeliveryList: z.object({ deliveries: z.array(delivery).meta({ description: 'The last 100 attempts, newest first' }) }),
  PingResult: pingResult
}
