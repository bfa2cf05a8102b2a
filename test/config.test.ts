// Configuration from the environment (docs/design.md §8): defaults, every variable, and bad
// values refused with one line naming the variable.
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig, parseDuration } from '../server/config.js'

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

function configError (env: Record<string, string>): ConfigError {
  try {
    loadConfig(env)
  } catch (e) {
    if (e instanceof ConfigError) return e
    throw e
  }
  throw new Error(`loadConfig(${JSON.stringify(env)}) did not throw`)
}

describe('loadConfig', () => {
  it('has the documented defaults for an empty environment', () => {
    expect(loadConfig({})).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      dataDir: './data',
      store: 'sqlite',
      mongodbUri: undefined,
      redisUrl: undefined,
      signup: 'open',
      bodyLimitBytes: 1_048_576,
      contentLimitBytes: 8_388_608,
      rateLimitPerMinute: 6000,
      sessionTtlMs: 30 * DAY,
      corsOrigins: '*',
      logLevel: 'info'
    })
  })

  it('keeps 10,000 change log entries per project by default; HISTORY_LIMIT=0 keeps all; HISTORY=off is the embedded store\'s benchmark reference only', () => {
    expect(loadConfig({}).history).toEqual({ limit: 10_000, enabled: true })
    expect(loadConfig({ HISTORY_LIMIT: '0' }).history).toEqual({ limit: 0, enabled: true })
    expect(loadConfig({ HISTORY_LIMIT: '25', HISTORY: 'off' }).history).toEqual({ limit: 25, enabled: false })
    expect(configError({ HISTORY_LIMIT: '-1' }).message).toMatch(/HISTORY_LIMIT/)
    expect(configError({ HISTORY_LIMIT: '1.5' }).message).toMatch(/HISTORY_LIMIT/)
    expect(configError({ HISTORY: 'maybe' }).message).toMatch(/HISTORY/)
    expect(configError({ STORE: 'mongodb', MONGODB_URI: 'mongodb://db:27017', HISTORY: 'off' }).message).toMatch(/HISTORY/)
  })

  it('does not read process.env when given an environment', () => {
    const saved = process.env.PORT
    process.env.PORT = '4567'
    try {
      expect(loadConfig({}).port).toBe(3000)
    } finally {
      if (saved === undefined) delete process.env.PORT
      else process.env.PORT = saved
    }
  })

  it('parses every documented variable', () => {
    expect(loadConfig({
      PORT: '8080',
      HOST: '127.0.0.1',
      DATA_DIR: '/var/lib/contentd',
      STORE: 'mongodb',
      MONGODB_URI: 'mongodb://db.internal:27017/contentd',
      REDIS_URL: 'redis://cache.internal:6379',
      SIGNUP: 'closed',
      BODY_LIMIT: '2048',
      CONTENT_LIMIT: '4096',
      RATE_LIMIT: '0',
      SESSION_TTL: '12h',
      CORS_ORIGINS: 'https://a.example, https://b.example',
      LOG_LEVEL: 'debug'
    })).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      dataDir: '/var/lib/contentd',
      store: 'mongodb',
      mongodbUri: 'mongodb://db.internal:27017/contentd',
      redisUrl: 'redis://cache.internal:6379',
      signup: 'closed',
      bodyLimitBytes: 2048,
      contentLimitBytes: 4096,
      rateLimitPerMinute: 0,
      sessionTtlMs: 12 * HOUR,
      corsOrigins: ['https://a.example', 'https://b.example'],
      logLevel: 'debug'
    })
  })

  it('accepts mongodb+srv and rediss URLs', () => {
    const config = loadConfig({ STORE: 'mongodb', MONGODB_URI: 'mongodb+srv://cluster.example/db', REDIS_URL: 'rediss://cache.example:6380' })
    expect(config.mongodbUri).toBe('mongodb+srv://cluster.example/db')
    expect(config.redisUrl).toBe('rediss://cache.example:6380')
  })

  it('treats an empty variable as not set and trims whitespace', () => {
    expect(loadConfig({ PORT: '', STORE: '', SESSION_TTL: '' })).toMatchObject({ port: 3000, store: 'sqlite', sessionTtlMs: 30 * DAY })
    expect(loadConfig({ PORT: ' 8080 ', SESSION_TTL: ' 90m ', CORS_ORIGINS: ' * ' })).toMatchObject({ port: 8080, sessionTtlMs: 90 * MINUTE, corsOrigins: '*' })
  })

  it('ignores variables it does not know', () => {
    expect(loadConfig({ PATH: '/usr/bin', NODE_ENV: 'production', UNRELATED: 'x' }).port).toBe(3000)
  })

  it('splits CORS_ORIGINS on commas, trimming and dropping empty entries', () => {
    expect(loadConfig({ CORS_ORIGINS: 'https://a.example' }).corsOrigins).toEqual(['https://a.example'])
    expect(loadConfig({ CORS_ORIGINS: ' https://a.example ,, http://localhost:5173 ,' }).corsOrigins).toEqual(['https://a.example', 'http://localhost:5173'])
  })

  it('reads TRUST_PROXY as false (default), true or a number of hops', () => {
    expect(loadConfig({}).trustProxy).toBe(false)
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true)
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2)
  })

  it('holds refusals 1 s, at most 32 per user or IP, by default; RATE_LIMIT_DELAY takes a duration or 0 (refusals sent at once)', () => {
    expect(loadConfig({}).rateLimitDelay).toEqual({ ms: 1000, heldPerSubject: 32 })
    expect(loadConfig({ RATE_LIMIT_DELAY: '0', RATE_LIMIT_DELAY_HELD: '0' }).rateLimitDelay).toEqual({ ms: 0, heldPerSubject: 0 })
    expect(loadConfig({ RATE_LIMIT_DELAY: '250ms', RATE_LIMIT_DELAY_HELD: '5' }).rateLimitDelay).toEqual({ ms: 250, heldPerSubject: 5 })
    expect(loadConfig({ RATE_LIMIT_DELAY: '3' }).rateLimitDelay.ms).toBe(3000)
  })

  it('takes scheduled backups only with BACKUP_DIR: every 24h, keeping 7, by default (docs/design.md §18)', () => {
    expect(loadConfig({}).backup).toEqual({ dir: undefined, intervalMs: DAY, keep: 7 })
    expect(loadConfig({ BACKUP_DIR: '/var/backups/contentd', BACKUP_INTERVAL: '6h', BACKUP_KEEP: '28' }).backup).toEqual({ dir: '/var/backups/contentd', intervalMs: 6 * 3_600_000, keep: 28 })
  })

  it('takes 0 for PORT (any free port) and for RATE_LIMIT (off)', () => {
    expect(loadConfig({ PORT: '0', RATE_LIMIT: '0' })).toMatchObject({ port: 0, rateLimitPerMinute: 0 })
  })

  // [environment, the variable the one-line message must name]
  const BAD: Array<[Record<string, string>, string]> = [
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ PORT: '-1' }, 'PORT'],
    [{ PORT: '80.5' }, 'PORT'],
    [{ STORE: 'redis' }, 'STORE'],
    [{ STORE: 'mongodb' }, 'MONGODB_URI'],
    [{ STORE: 'mongodb', MONGODB_URI: 'http://db.internal' }, 'MONGODB_URI'],
    [{ MONGODB_URI: 'not a url' }, 'MONGODB_URI'],
    [{ REDIS_URL: 'http://cache.internal' }, 'REDIS_URL'],
    [{ SIGNUP: 'maybe' }, 'SIGNUP'],
    [{ BODY_LIMIT: '100' }, 'BODY_LIMIT'],
    [{ BODY_LIMIT: '1mb' }, 'BODY_LIMIT'],
    [{ CONTENT_LIMIT: 'lots' }, 'CONTENT_LIMIT'],
    [{ RATE_LIMIT: '-5' }, 'RATE_LIMIT'],
    [{ RATE_LIMIT_DELAY: 'soon' }, 'RATE_LIMIT_DELAY'],
    [{ RATE_LIMIT_DELAY: '-1s' }, 'RATE_LIMIT_DELAY'],
    [{ RATE_LIMIT_DELAY_HELD: 'many' }, 'RATE_LIMIT_DELAY_HELD'],
    [{ SESSION_TTL: 'forever' }, 'SESSION_TTL'],
    [{ TRUST_PROXY: 'yes' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.0/8' }, 'TRUST_PROXY'],
    [{ SESSION_TTL: '0' }, 'SESSION_TTL'],
    [{ SESSION_TTL: '1.5d' }, 'SESSION_TTL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ CORS_ORIGINS: '   ' }, 'CORS_ORIGINS'],
    [{ BACKUP_INTERVAL: '0' }, 'BACKUP_INTERVAL'],
    [{ BACKUP_INTERVAL: 'daily' }, 'BACKUP_INTERVAL'],
    [{ BACKUP_KEEP: '0' }, 'BACKUP_KEEP'],
    [{ STORE: 'mongodb', MONGODB_URI: 'mongodb://db.internal/contentd', BACKUP_DIR: '/var/backups' }, 'BACKUP_DIR']
  ]
  for (const [env, variable] of BAD) {
    it(`refuses ${JSON.stringify(env)} naming ${variable} in one line`, () => {
      const error = configError(env)
      expect(error.message).toContain(variable)
      expect(error.message.startsWith('Invalid configuration: ')).toBe(true)
      expect(error.message).not.toContain('\n')
    })
  }

  it('names the offending value so the operator can find it', () => {
    expect(configError({ PORT: 'abc' }).message).toContain('"abc"')
  })
})

describe('parseDuration', () => {
  const TABLE: Array<[string, number | null]> = [
    ['30d', 30 * DAY],
    ['12h', 12 * HOUR],
    ['90m', 90 * MINUTE],
    ['45s', 45 * SECOND],
    ['500ms', 500],
    ['10', 10 * SECOND],
    ['0', 0],
    [' 5m ', 5 * MINUTE],
    ['', null],
    ['d', null],
    ['forever', null],
    ['1.5h', null],
    ['-1d', null],
    ['30 d', null],
    ['1w', null],
    ['1D', null],
    ['10sec', null]
  ]
  for (const [text, ms] of TABLE) {
    it(`${JSON.stringify(text)} is ${ms === null ? 'not a duration' : `${ms} ms`}`, () => {
      expect(parseDuration(text)).toBe(ms)
    })
  }
})
