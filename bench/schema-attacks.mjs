// Hand-run measurement for issue 26 finding 4 (docs/design.md §13b, SECURITY.md "A schema could
// stall every tenant"): another user's latency while one user attacks with a schema.
//
//   node bench/schema-attacks.mjs [server entry, default dist/server/index.js]
//
// Starts the server on a temporary data directory; user "victor" increments a counter in his
// own project, one request after the other, while user "mallory" sets each attack schema and
// writes against it in hers. Prints, per attack, the answers mallory got and victor's slowest
// increment during the attack. Not part of `npm run bench` or of the tests: timings on a
// shared machine vary, the tests assert outcomes (test/schema/schema-attacks.process.test.ts).
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const ROOT = resolve(import.meta.dirname, '..')
const entry = resolve(process.argv[2] ?? join(ROOT, 'dist/server/index.js'))

const port = await new Promise(done => { const s = createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => done(p)) }) })
const base = `http://127.0.0.1:${port}`
const dataDir = mkdtempSync(join(tmpdir(), 'schema-attacks-'))
const child = spawn(process.execPath, [entry], { env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, RATE_LIMIT: '0', LOG_LEVEL: 'warn' }, stdio: ['ignore', 'inherit', 'inherit'] })
for (let i = 0; ; i++) {
  try { if ((await fetch(`${base}/healthz`)).ok) break } catch { /* not listening yet */ }
  if (i > 400) throw new Error('server did not start')
  await new Promise(r => setTimeout(r, 50))
}

async function call (method, path, token, body) {
  const r = await fetch(base + path, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await r.text()
  return { status: r.status, text }
}
async function user (name) {
  const r = await fetch(`${base}/api/auth/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: name, password: 'correct horse battery staple' }) })
  const { token } = await r.json()
  await call('POST', '/api/projects', token, { slug: 'p' })
  const key = JSON.parse((await call('POST', '/api/keys', token, { name: 'k', permission: 'write' })).text).key
  return { token, key, project: `/api/@${name}/p` }
}

const mallory = await user('mallory')
const victor = await user('victor')

const objects = n => Array.from({ length: n }, (_, i) => ({ id: i, name: `item ${i}` }))
const patterns = n => Object.fromEntries(Array.from({ length: n }, (_, i) => [`^p${i}$`, { type: 'integer' }]))
const properties = n => Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, { type: 'integer' }]))

const attacks = [
  { name: 'format "url", 59 KiB string', schema: { type: 'object', properties: { u: { type: 'string', format: 'url' } } }, writes: [['set', { path: 'u', value: `http://a@${'::'.repeat(30_000)}\u0000` }]] },
  { name: 'uniqueItems, 15,000 objects, then a push', schema: { type: 'object', properties: { l: { type: 'array', uniqueItems: true } } }, writes: [['set', { path: 'l', value: objects(15_000) }], ['push', { path: 'l', value: { id: -1 } }]] },
  { name: '2,000 patternProperties (56 KiB schema)', schema: { type: 'object', patternProperties: patterns(2000) }, writes: [] },
  { name: 'pattern of 100 alternatives, 100,000-character string', schema: { type: 'object', properties: { t: { type: 'string', pattern: `^(?:${Array.from({ length: 100 }, (_, i) => `a${i}`).join('|')}|a)*$` } } }, writes: [['set', { path: 't', value: 'a'.repeat(100_000) }]] },
  { name: 'largest accepted: 499 properties at the root', schema: { type: 'object', properties: properties(499) }, writes: [] },
  { name: 'largest accepted per value: 120 properties on 300,000 items', schema: { type: 'object', properties: { l: { type: 'array', items: { type: 'object', properties: properties(120) } } } }, writes: [['set', { path: 'l', value: Array.from({ length: 300_000 }, () => ({})) }]] }
]

for (const attack of attacks) {
  await call('DELETE', `${mallory.project}/schema`, mallory.token)
  await call('POST', `${mallory.project}/content`, mallory.token, {})
  let attacking = true
  const latencies = []
  const victim = (async () => {
    while (attacking) {
      const started = performance.now()
      const r = await call('POST', `${victor.project}/content/increment`, victor.key, { path: 'n' })
      latencies.push(performance.now() - started)
      if (r.status !== 200) throw new Error(`victim: ${r.status} ${r.text}`)
      await new Promise(r => setTimeout(r, 20))
    }
  })()
  await new Promise(r => setTimeout(r, 100))
  const answers = []
  let started = performance.now()
  const put = await call('PUT', `${mallory.project}/schema`, mallory.token, attack.schema)
  answers.push(`PUT ${put.status} ${(performance.now() - started).toFixed(0)} ms${put.status === 200 ? '' : ` ${put.text.slice(0, 110)}`}`)
  for (const [op, body] of attack.writes) {
    started = performance.now()
    const r = await call('POST', `${mallory.project}/content/${op}`, mallory.key, body)
    answers.push(`${op} ${r.status} ${(performance.now() - started).toFixed(0)} ms`)
  }
  await new Promise(r => setTimeout(r, 100))
  attacking = false
  await victim
  console.log(`${attack.name}\n  mallory: ${answers.join('; ')}\n  victor: ${latencies.length} increments, slowest ${Math.max(...latencies).toFixed(0)} ms`)
}

child.kill('SIGTERM')
await new Promise(r => child.once('exit', r))
rmSync(dataDir, { recursive: true, force: true })
