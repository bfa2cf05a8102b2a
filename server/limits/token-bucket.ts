// RATE_LIMIT's budget as a token bucket (docs/operations.md#rate-limits): each subject's
// bucket holds up to `capacity` points and refills continuously, `perMinute` points a minute.
// A fixed window hands a flooder its whole budget again at the start of every window, so
// it works in bursts of a minute's worth; a bucket it has emptied gives it back only
// perMinute / 60 a second. Kept as the "generic cell rate algorithm": per subject one
// number, the time at which its bucket is full again, so a take is one comparison.
//
// With Redis the numbers live in Redis (one Lua script per take, on Redis's clock, so every
// node agrees); if Redis stops answering, each node falls back to its own in-memory buckets
// rather than refusing or waving through all traffic.
import { createHash } from 'node:crypto'
import type { createClient } from 'redis'

type RedisClient = ReturnType<typeof createClient>

// KEYS[1]: the subject; ARGV: points, ms per point, capacity in ms, force (1/0).
const TAKE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local full = tonumber(redis.call('GET', KEYS[1]) or '0')
if full < now then full = now end
local after = full + tonumber(ARGV[1]) * tonumber(ARGV[2])
local wait = after - now - tonumber(ARGV[3])
if wait > 0 and ARGV[4] == '0' then return math.ceil(wait) end
redis.call('SET', KEYS[1], string.format('%d', math.ceil(after)), 'PX', math.ceil(after - now) + 1)
return 0`
// Redis keeps scripts by their SHA-1: a take sends the digest, and the script's text only when
// Redis answers NOSCRIPT (it restarted, or SCRIPT FLUSH), which also loads it again.
const TAKE_SCRIPT_SHA = createHash('sha1').update(TAKE_SCRIPT).digest('hex')

// A full bucket needs no entry; forgetting them every so many takes keeps memory bounded.
const SWEEP_EVERY = 10_000

export class TokenBucket {
  private readonly msPerPoint: number
  private readonly capacityMs: number
  private readonly fullAt = new Map<string, number>()
  private takes = 0

  constructor (perMinute: number, capacity: number, private readonly name: string, private readonly redis?: RedisClient, private readonly now: () => number = Date.now) {
    this.msPerPoint = 60_000 / perMinute
    this.capacityMs = capacity * this.msPerPoint
  }

  /** Milliseconds until `points` more fit in `subject`'s budget; 0 when they were taken. */
  async take (subject: string, points: number, force = false): Promise<number> {
    if (this.redis?.isReady) {
      try {
        const options = { keys: [this.redisKey(subject)], arguments: [String(points), String(this.msPerPoint), String(this.capacityMs), force ? '1' : '0'] }
        const wait = await this.redis.evalSha(TAKE_SCRIPT_SHA, options).catch((error: unknown) => {
          if (error instanceof Error && error.message.startsWith('NOSCRIPT')) return this.redis?.eval(TAKE_SCRIPT, options)
          throw error
        })
        return Number(wait)
      } catch {
        // Redis went away mid-call: this node's own buckets, as when it is not ready.
      }
    }
    return this.takeInMemory(subject, points, force)
  }

  /** Fills `subject`'s bucket again. */
  async reset (subject: string): Promise<void> {
    this.fullAt.delete(subject)
    if (this.redis?.isReady) await this.redis.del(this.redisKey(subject))
  }

  private redisKey (subject: string): string {
    return `contentd:ratelimit:${this.name}:${subject}`
  }

  /** As take, in this node's memory. */
  private takeInMemory (subject: string, points: number, force: boolean): number {
    const now = this.now()
    if (++this.takes % SWEEP_EVERY === 0) this.forgetFull(now)
    const after = Math.max(this.fullAt.get(subject) ?? now, now) + points * this.msPerPoint
    const wait = after - now - this.capacityMs
    if (wait > 0 && !force) return wait
    this.fullAt.set(subject, after)
    return 0
  }

  private forgetFull (now: number): void {
    for (const [subject, at] of this.fullAt) if (at <= now) this.fullAt.delete(subject)
  }
}
