// Outbound requests check the address in the connection's own lookup (server/webhooks/guarded-request.ts):
// a name that resolves to a public address for one check and to an inside one for the
// connection is never contacted there. Real HTTP servers on loopback; names resolved by a
// scripted resolver (the connection must use it, not the system's DNS).
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import { AppTokens } from '../../server/services/app-tokens.js'
import { guardedFetch } from '../../server/webhooks/guarded-request.js'
import type { AppAuthRecord } from '../../server/store/app-rules-types.js'

describe('guardedFetch', () => {
  let server: Server
  let port = 0
  let requests = 0
  let body = '{"keys":[]}'
  beforeAll(async () => {
    server = createServer((_req, res) => { requests++; res.setHeader('content-type', 'application/json'); res.setHeader('x-answer', 'yes'); res.end(body) })
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as AddressInfo).port
  })
  afterAll(async () => { await new Promise(resolve => server.close(resolve)) })

  it('connects to the address its resolver gives, and answers status, headers and body', async () => {
    body = '{"keys":[]}'
    const asked: string[] = []
    const response = await guardedFetch(`http://keys.example.test:${port}/jwks`, {}, { resolve: async host => { asked.push(host); return ['127.0.0.1'] }, allowPrivate: true, maxBytes: 1024 })
    expect(asked).toEqual(['keys.example.test'])
    expect(response.status).toBe(200)
    expect(response.headers.get('x-answer')).toBe('yes')
    expect(await response.json()).toEqual({ keys: [] })
  })

  it('refuses a name that resolves inside, without contacting it', async () => {
    const before = requests
    await expect(guardedFetch(`http://keys.example.test:${port}/jwks`, {}, { resolve: async () => ['127.0.0.1'], allowPrivate: false, maxBytes: 1024 }))
      .rejects.toThrow(/keys\.example\.test resolves to 127\.0\.0\.1/)
    expect(requests).toBe(before)
  })

  it('fails an answer larger than maxBytes', async () => {
    body = JSON.stringify({ keys: [], padding: 'x'.repeat(4096) })
    await expect(guardedFetch(`http://keys.example.test:${port}/jwks`, {}, { resolve: async () => ['127.0.0.1'], allowPrivate: true, maxBytes: 1024 }))
      .rejects.toThrow(/larger than 1024 bytes/)
  })
})

describe('a JWKS URL', () => {
  it('is fetched over the connection whose lookup is checked: a name that turns private after the check is refused', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256')
    const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] })
    let requests = 0
    const server = createServer((_req, res) => { requests++; res.setHeader('content-type', 'application/json'); res.end(jwks) })
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    try {
      const port = (server.address() as AddressInfo).port
      const auth = (url: string): AppAuthRecord => ({ revision: url, issuer: 'https://issuer.test', audience: null, jwks: null, jwksUrl: url, secretCiphertext: null, setBy: 'alice', setAt: new Date().toISOString() })
      const token = await new SignJWT({ sub: 'u1' }).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setIssuer('https://issuer.test').setExpirationTime('5m').sign(privateKey)
      const options = { cacheEntries: 10, jwksTimeoutMs: 2000, openSecret: () => '', now: () => Date.now() }

      // Allowed to reach private addresses: the connection goes where the resolver says.
      const open = new AppTokens({ ...options, allowPrivate: true, resolve: async () => ['127.0.0.1'] })
      expect((await open.verify('p1', auth(`http://keys.example.test:${port}/jwks`), token)).sub).toBe('u1')
      expect(requests).toBe(1)

      // Not allowed: a public address for the policy's check, then loopback for the connection.
      let answers = 0
      const rebinding = new AppTokens({ ...options, allowPrivate: false, resolve: async () => (answers++ === 0 ? ['93.184.216.34'] : ['127.0.0.1']) })
      await expect(rebinding.verify('p2', auth(`https://keys.example.test:${port}/jwks`), token)).rejects.toMatchObject({ code: 'INVALID_TOKEN' })
      expect(answers).toBe(2)
      expect(requests).toBe(1)
    } finally {
      await new Promise(resolve => server.close(resolve))
    }
  })
})
