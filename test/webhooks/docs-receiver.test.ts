// The receiver docs/webhooks.md shows, run as it is written (only its port changed): it must
// fit in 15 lines, accept a change signed the way contentd signs, and refuse a tampered body.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { messageIdOf } from '../../server/webhooks/dispatcher.js'
import { SecretBox } from '../../server/webhooks/secret-box.js'
import { sendWebhook } from '../../server/webhooks/sender.js'
import { freePort, PROJECT_ROOT } from '../support/server-process.js'
import { until } from '../support/wait.js'

const page = readFileSync(join(PROJECT_ROOT, 'docs', 'webhooks.md'), 'utf8')
const block = /A receiver in 15 lines[\s\S]*?```js\n([\s\S]*?)```/.exec(page)?.[1] ?? ''
// Inside the repository (test-artifacts/ is ignored), so `import 'standardwebhooks'` resolves.
mkdirSync(join(PROJECT_ROOT, 'test-artifacts'), { recursive: true })
const dir = mkdtempSync(join(PROJECT_ROOT, 'test-artifacts', 'docs-receiver-'))
let child: ChildProcess | undefined

afterAll(() => {
  child?.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
})

describe('the receiver in docs/webhooks.md', () => {
  it('is 15 lines, verifies what contentd sends and refuses a forgery', async () => {
    expect(block.trimEnd().split('\n')).toHaveLength(15)
    const port = await freePort()
    expect(block).toContain('.listen(8080)')
    writeFileSync(join(dir, 'receiver.mjs'), block.replace('.listen(8080)', `.listen(${port}, '127.0.0.1')`))
    const secret = SecretBox.newSecret()
    let stdout = ''
    child = spawn(process.execPath, [join(dir, 'receiver.mjs')], { env: { ...process.env, WEBHOOK_SECRET: secret }, stdio: ['ignore', 'pipe', 'inherit'] })
    child.stdout?.on('data', (c: Buffer) => { stdout += c.toString() })
    const url = `http://127.0.0.1:${port}/`
    const entry = { project: '@alice/demo', version: 42, op: 'set', path: 'site.title', value: 'Hello', at: new Date().toISOString(), actor: { type: 'user', name: '@alice' } }
    const send = (payload: string, key = secret) => sendWebhook({ url, secret: key, messageId: messageIdOf('whk_docs', 42), payload, now: Date.now(), allowPrivate: true })
    let first = await send(JSON.stringify(entry))
    for (let i = 0; i < 100 && first.error?.includes('ECONNREFUSED'); i++) {
      await new Promise(resolve => setTimeout(resolve, 50))
      first = await send(JSON.stringify(entry))
    }
    expect(first).toMatchObject({ ok: true, status: 204 })
    await until(() => stdout.includes('v42: set site.title'), 'the receiver\'s line')
    expect((await send(JSON.stringify(entry), SecretBox.newSecret())).status, 'signed with another secret').toBe(400)
    expect(stdout.match(/v42/g)).toHaveLength(1)
  }, 30_000)
})
