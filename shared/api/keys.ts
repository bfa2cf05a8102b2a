// API keys (docs/design.md §12): never their secret, except in the answer that creates one.
import { z } from 'zod'
import { NARROWABLE_OPERATIONS } from '../key-scope.js'
import { isoTime, nextCursor } from './common.js'

export const keyPermission = z.enum(['read', 'write'])
export type KeyPermission = z.infer<typeof keyPermission>

export const apiKey = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string().meta({ description: 'The visible start of the key, to tell keys apart' }),
  permission: keyPermission,
  projects: z.array(z.string()).nullable().meta({ description: 'Project references the key is limited to; null: every project the user can access' }),
  paths: z.array(z.string()).nullable().meta({ description: 'Dot paths the key is narrowed to; null: not narrowed to paths' }),
  ops: z.array(z.enum(NARROWABLE_OPERATIONS)).nullable().meta({ description: 'Operations the key is narrowed to; null: not narrowed to operations' }),
  expiresAt: isoTime.nullable(),
  createdAt: isoTime
})
export type KeyView = z.infer<typeof apiKey>

export const createdApiKey = apiKey.extend({ key: z.string().meta({ description: 'The secret (prefix cdk_), shown only in this response' }) })
export type CreatedKeyView = z.infer<typeof createdApiKey>

export const KEY_RESPONSES = {
  ApiKey: apiKey,
  NewApiKey: createdApiKey,
  ApiKeyList: z.object({ keys: z.array(apiKey), nextCursor })
}
