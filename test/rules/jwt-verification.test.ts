// App tokens verified with real keys (docs/design.md §17): RS256, ES256 and EdDSA through an
// inline JWK set and through a JWKS URL served by a real local HTTP server (fetched, cached,
// refetched for an unknown kid), HS256 through a shared secret; and the refusals.
import { createServer, type RequestListener, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose'
import { APP_AUDIENCE, APP_ISSUER, hs256Token, signedToken, tampered } from '../support/app-tokens.js'
import { call, createProject, signup } from '../support/http.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'

interface Signer { alg: string, kid: string, privateKey: CryptoKey, jwk: JWK }

async function signer (alg: string, kid: string): Promise<Signer> {
  const { publicKey, privateKey } = await generateKeyPair(alg, alg === 'EdDSA' ? { crv: 'Ed25519' } : {})
  return { alg, kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } }
}

const RULES = { rules: { users: { $uid: { '.read': 'auth.sub == uid', '.write': 'auth.sub == uid' } } } }

describe('app token verification with real keys', () => {
  let app: TestApp
  let owner: string
  let jwksServer: Server
  let jwksUrl: string
  let served: JWK[] = []
  let fetches = 0
  const signers: Signer[] = []

  beforeAll(async () => {
    for (const [alg, kid] of [['RS256', 'rsa-1'], ['ES256', 'ec-1'], ['EdDSA', 'ed-1'], ['ES256', 'ec-later']] as const) signers.push(await signer(alg, kid))
    jwksServer = createServer((_req, res) => {
      fetches++
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({ keys: served }))
    })
    await new Promise<void>(resolve => jwksServer.listen(0, '127.0.0.1', resolve))
    jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/.well-known/jwks.json`
    // A JWKS URL on loopback over http: only with WEBHOOK_ALLOW_PRIVATE (tests, local development).
    app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE: 'true' })
    owner = await signup(app.url, 'alice')
    for (const slug of ['inline', 'byurl', 'shared']) {
      await createProject(app.url, owner, slug)
      const rules = await call(app.url, 'PUT', `/api/@alice/${slug}/rules`, { token: owner, body: RULES })
      expect(rules.status).toBe(200)
      const content = await call(app.url, 'POST', `/api/@alice/${slug}/content`, { token: owner, body: { users: { u1: { n: 1 } } } })
      expect(content.status).toBe(200)
    }
    const inline = await call(app.url, 'PUT', '/api/@alice/inline/auth', { token: owner, body: { issuer: APP_ISSUER, audience: APP_AUDIENCE, jwks: { keys: signers.slice(0, 3).map(s => s.jwk) } } })
    expect(inline.status).toBe(200)
    served = signers.slice(0, 3).map(s => s.jwk)
    const byUrl = await call(app.url, 'PUT', '/api/@alice/byurl/auth', { token: owner, body: { issuer: APP_ISSUER, audience: APP_AUDIENCE, jwksUrl } })
    expect(byUrl.status).toBe(200)
    expect(byUrl.body).toMatchObject({ kind: 'jwksUrl', jwksUrl })
    const shared = await call(app.url, 'PUT', '/api/@alice/shared/auth', { token: owner, body: { issuer: APP_ISSUER, audience: APP_AUDIENCE, hs256Secret: 'a-shared-hs256-secret-of-at-least-32-bytes!' } })
    expect(shared.status).toBe(200)
  })
  afterAll(async () => {
    await app.close()
    await new Promise(resolve => jwksServer.close(resolve))
  })

  const readOwn = (slug: string, token: string) => call(app.url, 'GET', `/api/@alice/${slug}/content?path=users.u1`, { token })

  for (const index of [0, 1, 2]) {
    it(`accepts a token signed with key ${index} (RS256, ES256, EdDSA) from an inline JWK set, and refuses it tampered`, async () => {
      const s = signers[index] as Signer
      const token = await signedToken(s.alg, s.privateKey, s.kid)
      expect((await readOwn('inline', token)).status).toBe(200)
      const bad = await readOwn('inline', tampered(token))
      expect(bad.status).toBe(401)
      expect(bad.body.code).toBe('INVALID_TOKEN')
    })

    it(`accepts key ${index}'s token through the JWKS URL`, async () => {
      const s = signers[index] as Signer
      expect((await readOwn('byurl', await signedToken(s.alg, s.privateKey, s.kid))).status).toBe(200)
    })
  }

  it('fetches the JWKS URL once for many tokens (cached), and again for an unknown kid', async () => {
    const before = fetches
    for (const s of signers.slice(0, 3)) expect((await readOwn('byurl', await signedToken(s.alg, s.privateKey, s.kid, { n: Math.random() }))).status).toBe(200)
    expect(fetches).toBe(before)
    // A key the app rotated in: the first token with its kid makes the server fetch again.
    const later = signers[3] as Signer
    served = [...served, later.jwk]
    const r = await readOwn('byurl', await signedToken(later.alg, later.privateKey, later.kid))
    // jose refetches on an unknown kid at most once per 30 s cooldown: the earlier fetches were
    // seconds ago, so this one may have to wait; either it verified or it was refused as unknown.
    if (r.status === 200) expect(fetches).toBe(before + 1)
    else expect(r.body.code).toBe('INVALID_TOKEN')
  })

  it('refuses a token of a key not in the set, an HS256 token against a JWK set, and a wrong audience', async () => {
    const stranger = await signer('ES256', 'nobody')
    expect((await readOwn('inline', await signedToken('ES256', stranger.privateKey, 'ec-1'))).status).toBe(401)
    expect((await readOwn('inline', await hs256Token({ sub: 'u1' }))).status).toBe(401)
    const s = signers[0] as Signer
    expect((await readOwn('inline', await signedToken(s.alg, s.privateKey, s.kid, {}, 'another-app'))).status).toBe(401)
  })

  it('accepts HS256 only with the shared secret, and refuses an asymmetric token there', async () => {
    expect((await readOwn('shared', await hs256Token({ sub: 'u1' }))).status).toBe(200)
    const s = signers[1] as Signer
    expect((await readOwn('shared', await signedToken(s.alg, s.privateKey, s.kid))).status).toBe(401)
  })

  /** The status and code a fresh token gets when @alice/byurl trusts a JWKS URL answered by `handler`. */
  async function tokenAgainstJwksServer (handler: RequestListener, fresh: number): Promise<{ status: number, code: unknown }> {
    const server = createServer(handler)
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`
      const set = await call(app.url, 'PUT', '/api/@alice/byurl/auth', { token: owner, body: { issuer: APP_ISSUER, audience: APP_AUDIENCE, jwksUrl: url } })
      expect(set.status).toBe(200)
      const s = signers[0] as Signer
      const r = await readOwn('byurl', await signedToken(s.alg, s.privateKey, s.kid, { fresh }))
      return { status: r.status, code: r.body.code }
    } finally {
      await new Promise(resolve => server.close(resolve))
    }
  }

  it('answers 401 INVALID_TOKEN when the JWKS URL does not answer JSON', async () => {
    expect(await tokenAgainstJwksServer((_req, res) => { res.statusCode = 500; res.end('no') }, 1)).toEqual({ status: 401, code: 'INVALID_TOKEN' })
  })

  it('answers 401 INVALID_TOKEN when the JWKS URL answers more than 256 KiB (the fetch stops reading)', async () => {
    const huge = JSON.stringify({ keys: served, padding: 'x'.repeat(300 * 1024) })
    expect(await tokenAgainstJwksServer((_req, res) => { res.setHeader('content-type', 'application/json'); res.end(huge) }, 2)).toEqual({ status: 401, code: 'INVALID_TOKEN' })
  })
})
