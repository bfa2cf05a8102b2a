// App users and rules (issue 31, docs/design.md §17): an increment by an app user under a
// three-level rule with a wildcard must run at ≥ 0.9× the same increment by an API key on the
// same server (the token's verification is cached until it expires; the rules are compiled
// once per document). Both counters must end at what their 2xx answers account for.
import { SignJWT } from 'jose'
import { call, expectStatus, owner, startContentd } from '../lib/contentd.mjs'
import { measure } from '../lib/load.mjs'

const ISSUER = 'https://bench.example/'
const SECRET = 'bench-app-secret-of-at-least-32-bytes-long'
const RULES = { rules: { games: { $game: { scores: { $uid: { '.write': 'auth.sub == uid' } } } } } }

export async function rulesIncrement () {
  const server = await startContentd()
  try {
    const user = await owner(server.url, 'bench')
    const path = await user.project('rules', { games: { g1: { scores: { u1: 0, key: 0 } } } })
    await expectStatus(call(server.url, 'PUT', `${path}/auth`, { token: user.session, body: { issuer: ISSUER, hs256Secret: SECRET } }), 200, 'trust the app')
    await expectStatus(call(server.url, 'PUT', `${path}/rules`, { token: user.session, body: RULES }), 200, 'set rules')
    const appToken = await new SignJWT({ sub: 'u1' }).setProtectedHeader({ alg: 'HS256' }).setIssuer(ISSUER).setExpirationTime('2h').sign(new TextEncoder().encode(SECRET))
    const url = `${server.url}${path}/content/increment`
    const byKey = await measure({ url, headers: { authorization: `Bearer ${user.key}` }, body: JSON.stringify({ path: 'games.g1.scores.key' }), pid: server.pid })
    const byApp = await measure({ url, headers: { authorization: `Bearer ${appToken}` }, body: JSON.stringify({ path: 'games.g1.scores.u1' }), pid: server.pid })
    const scores = (await expectStatus(call(server.url, 'GET', `${path}/content?path=games.g1.scores`, { token: user.key }), 200, 'read scores')).body
    const plausible = scores.u1 >= byApp.ok && scores.key >= byKey.ok
    const ratio = byApp.reqPerSec / byKey.reqPerSec
    return [
      { scenario: 'increment by an API key (rules comparison)', ...byKey },
      { scenario: 'increment by an app user under a three-level wildcard rule', ...byApp, failed: byApp.failed || !plausible || ratio < 0.9, note: `${ratio.toFixed(2)}× the API key's req/s (goal ≥ 0.9)${plausible ? '' : '; a counter is LOWER THAN THE 2xx ANSWERS'}` }
    ]
  } finally {
    await server.stop()
  }
}
