// Operations endpoints: health, readiness, the reference itself.
import { z } from 'zod'
import { isoTime } from './common.js'

export const health = z.object({ status: z.literal('ok') })
export type HealthView = z.infer<typeof health>

export const ready = z.object({
  status: z.literal('ready'),
  checks: z.record(z.string(), z.literal('ok')),
  backup: z.object({ lastAt: isoTime.nullable() }).optional().meta({ description: 'With BACKUP_DIR: when the last good scheduled backup began (null before the first)' })
})
export type ReadyView = z.infer<typeof ready>

export const OPERATIONS_RESPONSES = {
  Health: health,
  Ready: ready,
  OpenApiDocument: z.looseObject({ openapi: z.string(), info: z.record(z.string(), z.unknown()), paths: z.record(z.string(), z.unknown()) }).meta({ description: 'An OpenAPI 3.1 document (this one)' })
}
