// Signing up, logging in and out. Sessions are random tokens stored as hashes.
import type { SessionGrant } from '../../shared/api/accounts.js'
import { ContentdError } from '../../shared/errors.js'
import { passwordProblem } from '../auth/password-policy.js'
import { hashPassword, verifyPassword } from '../auth/passwords.js'
import { hashSecret, newId, newSecret } from '../auth/tokens.js'
import type { Clock } from '../clock.js'
import type { Store, UserRecord } from '../store/types.js'
import type { AccessEvents } from './access-events.js'
import { displayName } from './identity.js'

// What signup and login answer: the shape of shared/api/accounts.ts.
export type { SessionGrant }

export class Accounts {
  /** `accessEvents` hears of logouts, to end the connections using the session. */
  constructor (private readonly store: Store, private readonly accessEvents: AccessEvents, private readonly sessionTtlMs: number, private readonly now: Clock) {}

  /** Makes a user without signing in (the operator's CLI); signup is this plus a session. */
  async createUser (username: string, password: string): Promise<UserRecord> {
    const problem = passwordProblem(username, password)
    if (problem) throw new ContentdError('PASSWORD_TOO_COMMON', problem)
    // Cheap check first so a taken name does not cost an argon2 hash; the unique index
    // still decides races.
    if (await this.store.findUserByName(username)) throw new ContentdError('USERNAME_TAKEN')
    const user = { id: newId('usr_'), username, passwordHash: await hashPassword(password), createdAt: new Date(this.now()).toISOString() }
    await this.store.createUser(user)
    return user
  }

  async signup (username: string, password: string): Promise<SessionGrant> {
    const user = await this.createUser(username, password)
    return this.startSession(user.id, username)
  }

  async login (username: string, password: string): Promise<SessionGrant> {
    const user = await this.store.findUserByName(username)
    // Same work and same answer whether the user is missing or the password is wrong.
    const valid = await verifyPassword(user ? user.passwordHash : null, password)
    if (!user || !valid) throw new ContentdError('WRONG_CREDENTIALS')
    return this.startSession(user.id, user.username)
  }

  async logout (sessionTokenHash: string): Promise<void> {
    await this.store.deleteSession(sessionTokenHash)
    this.accessEvents.emit({ kind: 'credential-revoked', credentialHash: sessionTokenHash })
  }

  private async startSession (userId: string, username: string): Promise<SessionGrant> {
    const token = newSecret('session')
    const now = this.now()
    const expiresAt = new Date(now + this.sessionTtlMs).toISOString()
    await this.store.createSession({ tokenHash: hashSecret(token), userId, createdAt: new Date(now).toISOString(), expiresAt })
    return { token, username: displayName(username), expiresAt }
  }
}
