// The configuration of the realtime and login limits (server/config.ts): defaults, parsing,
// and the one cross-check (a send buffer must hold the largest snapshot).
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../server/config.js'

describe('realtime and login limit variables', () => {
  it('have their documented defaults', () => {
    expect(loadConfig({})).toMatchObject({
      socketSendBufferBytes: 2 * 8_388_608,
      socketResubscribeWindowMs: 2000,
      socketResubscribeBytes: 1_048_576,
      loginAttemptsPerUsername: 10,
      loginAttemptWindowMs: 15 * 60_000
    })
  })

  it('are parsed, and the send buffer defaults to twice CONTENT_LIMIT', () => {
    expect(loadConfig({
      SOCKET_SEND_BUFFER: '9000000',
      SOCKET_RESUBSCRIBE_WINDOW: '500ms',
      SOCKET_RESUBSCRIBE_BYTES: '0',
      LOGIN_ATTEMPTS_PER_USERNAME: '0',
      LOGIN_ATTEMPT_WINDOW: '1h'
    })).toMatchObject({
      socketSendBufferBytes: 9_000_000,
      socketResubscribeWindowMs: 500,
      socketResubscribeBytes: 0,
      loginAttemptsPerUsername: 0,
      loginAttemptWindowMs: 3_600_000
    })
    expect(loadConfig({ CONTENT_LIMIT: '4096' }).socketSendBufferBytes).toBe(8192)
  })

  it('refuse a send buffer that could not hold a snapshot at CONTENT_LIMIT, and malformed values', () => {
    expect(() => loadConfig({ CONTENT_LIMIT: '4096', SOCKET_SEND_BUFFER: '4096' })).toThrow(ConfigError)
    expect(() => loadConfig({ CONTENT_LIMIT: '4096', SOCKET_SEND_BUFFER: '4096' })).toThrow(/SOCKET_SEND_BUFFER must be larger than CONTENT_LIMIT/)
    expect(() => loadConfig({ SOCKET_RESUBSCRIBE_WINDOW: 'soon' })).toThrow(/SOCKET_RESUBSCRIBE_WINDOW/)
    expect(() => loadConfig({ LOGIN_ATTEMPTS_PER_USERNAME: '-1' })).toThrow(/LOGIN_ATTEMPTS_PER_USERNAME/)
    expect(() => loadConfig({ LOGIN_ATTEMPT_WINDOW: '0s' })).toThrow(/LOGIN_ATTEMPT_WINDOW/)
  })
})
