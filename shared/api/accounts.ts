// Accounts: signup, login, "who am I".
import { z } from 'zod'
import { displayName, isoTime } from './common.js'

/** What signup and login answer: a session token. */
export const session = z.object({
  token: z.string().meta({ description: 'Session token (prefix cds_); send as Authorization: Bearer <token>' }),
  username: displayName,
  expiresAt: isoTime
})
export type SessionGrant = z.infer<typeof session>

export const me = z.object({ username: displayName, createdAt: isoTime })
export type MeView = z.infer<typeof me>

export const ACCOUNT_RESPONSES = { Session: session, Me: me }
