// The content: reads answer JSON itself; writes answer a message (and batch/patch the version).
import { z } from 'zod'
import { jsonValue, message } from './common.js'

export const applied = z.object({
  message: z.string(),
  version: z.number().int().min(1).meta({ description: 'The version the batch or patch created' })
})
export type AppliedView = z.infer<typeof applied>

export const CONTENT_RESPONSES = {
  Message: message,
  Applied: applied,
  Content: z.record(z.string(), jsonValue()).meta({ description: "The project's whole content: a JSON object" }),
  JsonValue: jsonValue().meta({ description: 'Any JSON value' })
}
