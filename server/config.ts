// Configuration, read once from the environment and validated (docs/design.md §8). This is the
// only module that reads process.env; everything else receives a Config.
import { z } from 'zod'

const DURATION_UNITS_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const

/** "30d", "12h", "90m", "45s", "500ms"; a bare number is seconds. */
export function parseDuration (text: string): number | null {
  const match = /^(\d+)(ms|s|m|h|d)?$/.exec(text.trim())
  if (!match) return null
  const unit = (match[2] ?? 's') as keyof typeof DURATION_UNITS_MS
  return Number(match[1]) * DURATION_UNITS_MS[unit]
}

const integer = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.string().trim().regex(/^\d+$/, 'must be a whole number').transform(Number).pipe(z.number().int().min(min).max(max))

/** A duration in milliseconds; with `zero`, also 0 for "none". */
const durationIn = ({ zero, message }: { zero: boolean, message: string }) => z.string().transform((text, ctx) => {
  const ms = parseDuration(text)
  if (ms === null || (ms === 0 && !zero)) {
    ctx.addIssue({ code: 'custom', message })
    return z.NEVER
  }
  return ms
})

const duration = durationIn({ zero: false, message: 'must be a duration such as 30d, 12h, 90m or 45s' })
const durationOrZero = durationIn({ zero: true, message: 'must be 0 or a duration such as 1s or 500ms' })

const url = (protocols: string[]) => z.string().trim().refine(value => {
  try { return protocols.includes(new URL(value).protocol) } catch { return false }
}, `must be a URL starting with ${protocols.map(p => p + '//').join(' or ')}`)

const schema = z.object({
  PORT: integer(0, 65535).default(3000),
  // Loopback unless told: signup is open by default (docs/design.md §8); the Procfile listens on all interfaces.
  HOST: z.string().trim().min(1).default('127.0.0.1'),
  DATA_DIR: z.string().trim().min(1).default('./data'),
  STORE: z.enum(['sqlite', 'mongodb']).default('sqlite'),
  MONGODB_URI: url(['mongodb:', 'mongodb+srv:']).optional(),
  REDIS_URL: url(['redis:', 'rediss:']).optional(),
  SIGNUP: z.enum(['open', 'closed']).default('open'),
  BODY_LIMIT: integer(1024).default(1_048_576),
  CONTENT_LIMIT: integer(1024).default(8_388_608),
  // The budget is estimated (4× JSON size) and garbage comes on top: with 32 MiB (and the
  // heap growth of heap-growth.ts) a server with 10,000 touched projects stays near 190 MiB
  // RSS (npm run bench). 32 MiB also holds one document at the default CONTENT_LIMIT.
  CACHE_BYTES: integer(0).default(32 * 1024 * 1024),
  // SQLite's page cache per connection of the embedded store; by default what better-sqlite3
  // builds SQLite with (16,000 KiB). A store larger than that fills it (~16 MiB of RSS);
  // 4 MiB saves ~13 MiB RSS in the memory scenario but costs writes spread over many projects
  // 7-15% more store CPU (their pages no longer stay cached; BENCHMARKS.md), so it is the
  // operator's trade. At least 1 KiB (see page-cache.ts).
  SQLITE_CACHE_BYTES: integer(1024).default(16_000 * 1024),
  // Change log entries kept per project (docs/design.md §9); 0 keeps all.
  HISTORY_LIMIT: integer(0).default(10_000),
  // Benchmark reference only: `off` records no history at all, to measure what the log costs
  // (npm run bench). Never for real use: changes, ?version= and revert then answer 410.
  HISTORY: z.enum(['on', 'off']).default('on'),
  // Transactions (docs/design.md §10): operations per batch or patch, and how long the first
  // answer to an Idempotency-Key is kept.
  BATCH_LIMIT: integer(1, 10_000).default(100),
  IDEMPOTENCY_TTL: duration.default(24 * DURATION_UNITS_MS.h),
  RATE_LIMIT: integer(0).default(6000),
  // A refusal (429, refused handshake, RATE_LIMITED ack) is sent only after this long (or its
  // retryAfter, if shorter), so a client looping on refusals waits instead (server/limits/tarpit.ts);
  // at most RATE_LIMIT_DELAY_HELD at once per user or IP, the rest are sent at once. 0: no delay.
  RATE_LIMIT_DELAY: durationOrZero.default(1000),
  RATE_LIMIT_DELAY_HELD: integer(0).default(32),
  // 1 per second per IP: a brake on password guessing that a setup script creating a few
  // dozen users in a burst does not hit.
  // Behind a reverse proxy: how many proxy hops to trust for the client address
  // (X-Forwarded-For), so rate limits and logs see clients rather than the proxy.
  TRUST_PROXY: z.string().trim().regex(/^(false|true|\d{1,2})$/, 'must be false, true or a number of proxy hops').default('false'),
  AUTH_RATE_LIMIT: integer(0).default(60),
  REQUEST_TIMEOUT: duration.default(30_000),
  // on: /metrics needs METRICS_TOKEN (without one it answers 401 to everyone); open: no
  // token needed (a private network scraping it); off: no /metrics at all.
  METRICS: z.enum(['on', 'open', 'off']).default('on'),
  METRICS_TOKEN: z.string().trim().min(16, 'must be at least 16 characters').optional(),
  SESSION_TTL: duration.default(30 * DURATION_UNITS_MS.d),
  CORS_ORIGINS: z.string().trim().refine(value => value === '*' || value.split(',').some(o => o.trim() !== ''), 'must be * or a comma-separated list of origins').default('*'),
  SOCKET_CONNECTIONS_PER_IDENTITY: integer(1).default(1000),
  SOCKET_SUBSCRIPTIONS_PER_CONNECTION: integer(1).default(100),
  // Live queries (docs/design.md §16, §13b): each distinct one costs work on every change.
  QUERY_SUBSCRIPTIONS_PER_CONNECTION: integer(1).default(20),
  QUERY_RESULTS_PER_PROJECT: integer(1).default(100),
  QUERY_ORDERS_PER_PROJECT: integer(1).default(10),
  // Each project with a live query keeps a copy of its content on the node: bounded together.
  QUERY_CONTENT_BYTES: integer(1024).default(256 * 1024 * 1024),
  // Bytes the server may hold for one Socket.IO connection that does not read what it is
  // sent; past it the connection is dropped. Default 2 × CONTENT_LIMIT; it must exceed
  // CONTENT_LIMIT, or a subscriber to a full project could never receive its snapshot.
  SOCKET_SEND_BUFFER: integer(1024).optional(),
  // Re-subscribing must not amplify traffic: within SOCKET_RESUBSCRIBE_WINDOW of a snapshot
  // of a project, the same user (all their connections together) gets more snapshots of it
  // only while they total under SOCKET_RESUBSCRIBE_BYTES; past that the subscribe answers RATE_LIMITED with
  // `retryAfter`. Small documents can be re-subscribed freely, large ones about once a window.
  SOCKET_RESUBSCRIBE_WINDOW: duration.default(2000),
  SOCKET_RESUBSCRIBE_BYTES: integer(0).default(1_048_576),
  // Presence (docs/design.md §14): the largest state one member may show, in bytes of JSON
  // (a Socket.IO message is at most 16 KiB, so more could never arrive); how long a node
  // that vanished without saying goodbye keeps its members listed on the others; and how
  // many members one project shows.
  PRESENCE_STATE_LIMIT: integer(2, 12_288).default(1024),
  PRESENCE_TTL: duration.default(30_000),
  PRESENCE_MEMBERS_LIMIT: integer(1).default(1000),
  // A comment line this often on every Server-Sent Events stream keeps proxies from closing
  // it while no change comes (docs/design.md §9: 15 s).
  SSE_HEARTBEAT: duration.default(15_000),
  // Login attempts per username (from any IP, existing or not) that may fail within
  // LOGIN_ATTEMPT_WINDOW; the next answers 429 until the window has passed. 0 turns it off.
  LOGIN_ATTEMPTS_PER_USERNAME: integer(0).default(10),
  LOGIN_ATTEMPT_WINDOW: duration.default(15 * 60_000),
  // Quotas: one account cannot grow the server's tables (and the cost of listing them) without
  // bound. Beyond them a create answers 403 QUOTA_EXCEEDED.
  MAX_KEYS_PER_USER: integer(1).default(1000),
  MAX_PROJECTS_PER_USER: integer(1).default(1000),
  // Bounded work (docs/design.md §13b): webhooks per project, live Idempotency-Key records per
  // user (all sessions and keys together), bytes of change-log entries per page / ack / replay
  // burst, bytes of one content schema, and unsent bytes held for clients that do not read
  // (per user, per process).
  MAX_WEBHOOKS_PER_PROJECT: integer(1).default(20),
  MAX_IDEMPOTENCY_KEYS_PER_USER: integer(1).default(100_000),
  CHANGES_PAGE_BYTES: integer(1024).default(1_048_576),
  SCHEMA_LIMIT: integer(1024).default(65_536),
  SLOW_CLIENT_BYTES_PER_USER: integer(1024).default(64 * 1024 * 1024),
  SLOW_CLIENT_BYTES: integer(1024).default(256 * 1024 * 1024),
  // Scheduled backups of the embedded store (docs/design.md §18): on when BACKUP_DIR is set;
  // `contentd backup` writes there too (else in DATA_DIR/backups).
  BACKUP_DIR: z.string().trim().min(1).optional(),
  BACKUP_INTERVAL: duration.default(24 * DURATION_UNITS_MS.h),
  BACKUP_KEEP: integer(1).default(7),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // Webhooks (docs/webhooks.md): plain http: and loopback/private targets only when true
  // (tests, local development); the key that encrypts webhook secrets at rest, kept outside
  // the database (without it, a key file in DATA_DIR: fine for one node, not for several).
  WEBHOOK_ALLOW_PRIVATE: z.enum(['true', 'false']).default('false'),
  WEBHOOK_SECRET_KEY: z.string().trim().min(32, 'must be at least 32 characters (e.g. openssl rand -base64 32)').optional(),
  // App users and rules (docs/design.md §17, docs/rules.md): bytes of one rules document,
  // rule expressions one request may evaluate, verified app tokens remembered per process
  // (until their expiry), and how long a JWKS URL may take to answer.
  RULES_LIMIT: integer(256).default(65_536),
  RULES_EVALUATION_BUDGET: integer(1).default(1000),
  APP_TOKEN_CACHE: integer(0).default(10_000),
  JWKS_TIMEOUT: duration.default(5000)
}).superRefine((env, ctx) => {
  if (env.STORE === 'mongodb' && !env.MONGODB_URI) {
    ctx.addIssue({ code: 'custom', path: ['MONGODB_URI'], message: 'is required when STORE=mongodb' })
  }
  if (env.STORE === 'mongodb' && env.HISTORY === 'off') {
    ctx.addIssue({ code: 'custom', path: ['HISTORY'], message: 'off is a benchmark reference of the embedded store only' })
  }
  if (env.STORE === 'mongodb' && env.BACKUP_DIR !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['BACKUP_DIR'], message: 'backs up the embedded store; back up MongoDB with its own tools (docs/operations.md)' })
  }
  if (env.METRICS === 'open' && env.METRICS_TOKEN !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['METRICS'], message: 'is open, so METRICS_TOKEN would never be asked for: unset one of them' })
  }
  if (env.PRESENCE_TTL < 1000) {
    ctx.addIssue({ code: 'custom', path: ['PRESENCE_TTL'], message: 'must be at least 1s' })
  }
  if (env.SOCKET_SEND_BUFFER !== undefined && env.SOCKET_SEND_BUFFER <= env.CONTENT_LIMIT) {
    ctx.addIssue({ code: 'custom', path: ['SOCKET_SEND_BUFFER'], message: `must be larger than CONTENT_LIMIT (${env.CONTENT_LIMIT})` })
  }
})

type Env = z.output<typeof schema>

export interface Config {
  port: number
  host: string
  dataDir: string
  store: Env['STORE']
  mongodbUri: string | undefined
  redisUrl: string | undefined
  signup: Env['SIGNUP']
  bodyLimitBytes: number
  contentLimitBytes: number
  cacheBytes: number
  /** SQLite's page cache per connection of the embedded store (SQLITE_CACHE_BYTES). */
  sqliteCacheBytes: number
  /** The change log: entries kept per project (0: all), and HISTORY=off (benchmark reference). */
  history: { limit: number, enabled: boolean }
  /** Operations per batch or JSON Patch (BATCH_LIMIT). */
  batchLimit: number
  /** How long an Idempotency-Key's first answer is kept (IDEMPOTENCY_TTL). */
  idempotencyTtlMs: number
  /** Requests (and Socket.IO handshakes and events) per minute per user, per IP when anonymous; 0 disables. */
  rateLimitPerMinute: number
  /** How long a refusal is held before it is sent, and how many are held at once per user or IP. */
  rateLimitDelay: { ms: number, heldPerSubject: number }
  /** Express's `trust proxy`: false, true (any) or the number of proxy hops to trust. */
  trustProxy: boolean | number
  /** Login and signup attempts per minute per IP (against password guessing); 0 disables. */
  authRateLimitPerMinute: number
  /** Longest time a client may take to send a whole request (headers and body). */
  requestTimeoutMs: number
  /**
   * GET /metrics: off (not served), open (no credentials) or token (Authorization: Bearer
   * <METRICS_TOKEN>; with no token configured nobody gets in).
   */
  metrics: { access: 'off' | 'open' | 'token', token: string | undefined }
  sessionTtlMs: number
  /** '*' or an explicit list of allowed origins. */
  corsOrigins: '*' | string[]
  /** Open Socket.IO connections per user, per node. */
  socketConnectionsPerIdentity: number
  /** Project subscriptions per Socket.IO connection. */
  socketSubscriptionsPerConnection: number
  /** Live queries: per Socket.IO connection, and distinct results per project on a node. */
  queries: { perConnection: number, resultsPerProject: number, ordersPerProject: number, contentBytes: number }
  /** Bytes queued for one Socket.IO connection before it is dropped as not reading. */
  socketSendBufferBytes: number
  /** Re-subscribe budget: snapshot bytes of one project per connection per window, after the first. */
  socketResubscribeWindowMs: number
  socketResubscribeBytes: number
  /** Presence: bytes of one member's state, how soon a vanished node's members leave, members shown per project. */
  presenceStateLimitBytes: number
  presenceTtlMs: number
  presenceMembersLimit: number
  /** Interval of the comment line on Server-Sent Events streams. */
  sseHeartbeatMs: number
  /** Failed login attempts per username per window before it answers 429; 0 disables. */
  loginAttemptsPerUsername: number
  loginAttemptWindowMs: number
  /** Most API keys and owned projects per user (docs/design.md §13), webhooks per project and live idempotency records per user (§13b). */
  quotas: Quotas
  /** Bytes of change-log entries in one `changes` page, Socket.IO `since` ack or SSE replay burst (docs/design.md §13b). */
  changesPageBytes: number
  /** Largest content schema, in bytes of its JSON (docs/design.md §13b). */
  schemaLimitBytes: number
  /** Unsent bytes held for clients that do not read, per user and per process (docs/design.md §13b). */
  slowClientBytes: { perUser: number, perProcess: number }
  /** Backups (docs/design.md §18): BACKUP_DIR (scheduled backups only when set), BACKUP_INTERVAL, BACKUP_KEEP. */
  backup: { dir: string | undefined, intervalMs: number, keep: number }
  logLevel: Env['LOG_LEVEL']
  /** Webhooks: whether http: and private targets are allowed, and the secrets' encryption key. */
  webhooks: { allowPrivate: boolean, secretKey: string | undefined }
  /** App users and rules (docs/design.md §17): RULES_LIMIT, RULES_EVALUATION_BUDGET, APP_TOKEN_CACHE, JWKS_TIMEOUT. */
  rules: RulesConfig
}

export interface RulesConfig {
  limitBytes: number
  evaluationBudget: number
  tokenCacheEntries: number
  jwksTimeoutMs: number
}

export interface Quotas {
  keysPerUser: number
  projectsPerUser: number
  webhooksPerProject: number
  idempotencyKeysPerUser: number
}

export class ConfigError extends Error {}

const KNOWN = Object.keys(schema.shape) as Array<keyof Env>
const SECRET_VARIABLES = new Set(['MONGODB_URI', 'REDIS_URL', 'METRICS_TOKEN', 'WEBHOOK_SECRET_KEY'])

/** Reads the configuration from an environment (process.env by default). */
export function loadConfig (source: Record<string, string | undefined> = process.env): Config {
  const picked: Record<string, string> = {}
  for (const name of KNOWN) {
    const value = source[name]
    // An empty variable means "not set", as in most shells' `VAR= cmd`.
    if (value !== undefined && value !== '') picked[name] = value
  }
  const parsed = schema.safeParse(picked)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const name = issue?.path.join('.') || 'configuration'
    // Variables that may hold credentials are named but never echoed.
    const shown = SECRET_VARIABLES.has(name) ? '' : ` (got ${JSON.stringify(picked[name] ?? '')})`
    throw new ConfigError(`Invalid configuration: ${name} ${issue?.message ?? 'is not valid'}${shown}`)
  }
  const env = parsed.data
  return {
    port: env.PORT,
    host: env.HOST,
    dataDir: env.DATA_DIR,
    store: env.STORE,
    mongodbUri: env.MONGODB_URI,
    redisUrl: env.REDIS_URL,
    signup: env.SIGNUP,
    bodyLimitBytes: env.BODY_LIMIT,
    contentLimitBytes: env.CONTENT_LIMIT,
    cacheBytes: env.CACHE_BYTES,
    sqliteCacheBytes: env.SQLITE_CACHE_BYTES,
    history: { limit: env.HISTORY_LIMIT, enabled: env.HISTORY === 'on' },
    batchLimit: env.BATCH_LIMIT,
    idempotencyTtlMs: env.IDEMPOTENCY_TTL,
    rateLimitPerMinute: env.RATE_LIMIT,
    rateLimitDelay: { ms: env.RATE_LIMIT_DELAY, heldPerSubject: env.RATE_LIMIT_DELAY_HELD },
    trustProxy: env.TRUST_PROXY === 'true' ? true : env.TRUST_PROXY === 'false' ? false : Number(env.TRUST_PROXY),
    authRateLimitPerMinute: env.AUTH_RATE_LIMIT,
    requestTimeoutMs: env.REQUEST_TIMEOUT,
    metrics: { access: env.METRICS === 'on' ? 'token' : env.METRICS, token: env.METRICS_TOKEN },
    sessionTtlMs: env.SESSION_TTL,
    corsOrigins: env.CORS_ORIGINS === '*' ? '*' : env.CORS_ORIGINS.split(',').map(o => o.trim()).filter(Boolean),
    socketConnectionsPerIdentity: env.SOCKET_CONNECTIONS_PER_IDENTITY,
    socketSubscriptionsPerConnection: env.SOCKET_SUBSCRIPTIONS_PER_CONNECTION,
    queries: { perConnection: env.QUERY_SUBSCRIPTIONS_PER_CONNECTION, resultsPerProject: env.QUERY_RESULTS_PER_PROJECT, ordersPerProject: env.QUERY_ORDERS_PER_PROJECT, contentBytes: env.QUERY_CONTENT_BYTES },
    socketSendBufferBytes: env.SOCKET_SEND_BUFFER ?? 2 * env.CONTENT_LIMIT,
    socketResubscribeWindowMs: env.SOCKET_RESUBSCRIBE_WINDOW,
    socketResubscribeBytes: env.SOCKET_RESUBSCRIBE_BYTES,
    presenceStateLimitBytes: env.PRESENCE_STATE_LIMIT,
    presenceTtlMs: env.PRESENCE_TTL,
    presenceMembersLimit: env.PRESENCE_MEMBERS_LIMIT,
    sseHeartbeatMs: env.SSE_HEARTBEAT,
    loginAttemptsPerUsername: env.LOGIN_ATTEMPTS_PER_USERNAME,
    loginAttemptWindowMs: env.LOGIN_ATTEMPT_WINDOW,
    quotas: {
      keysPerUser: env.MAX_KEYS_PER_USER,
      projectsPerUser: env.MAX_PROJECTS_PER_USER,
      webhooksPerProject: env.MAX_WEBHOOKS_PER_PROJECT,
      idempotencyKeysPerUser: env.MAX_IDEMPOTENCY_KEYS_PER_USER
    },
    changesPageBytes: env.CHANGES_PAGE_BYTES,
    schemaLimitBytes: env.SCHEMA_LIMIT,
    slowClientBytes: { perUser: env.SLOW_CLIENT_BYTES_PER_USER, perProcess: env.SLOW_CLIENT_BYTES },
    backup: { dir: env.BACKUP_DIR, intervalMs: env.BACKUP_INTERVAL, keep: env.BACKUP_KEEP },
    logLevel: env.LOG_LEVEL,
    webhooks: { allowPrivate: env.WEBHOOK_ALLOW_PRIVATE === 'true', secretKey: env.WEBHOOK_SECRET_KEY },
    rules: { limitBytes: env.RULES_LIMIT, evaluationBudget: env.RULES_EVALUATION_BUDGET, tokenCacheEntries: env.APP_TOKEN_CACHE, jwksTimeoutMs: env.JWKS_TIMEOUT }
  }
}
