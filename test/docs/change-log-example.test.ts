// docs/change-log.md's curl example, run for real: the `sh` block after its marker runs with
// bash against a server in the state the README's walkthrough leaves (`B`, `TOKEN`, `KEY`
// set, @alice/demo at version 1), and must print what the `text` block after it says, line
// for line (`…` standing for what differs from run to run).
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, createKey, createProject, signup } from '../support/http.js'
import { PROJECT_ROOT } from '../support/server-process.js'
import { startTestApp, type TestApp } from '../support/temp-app.js'
import { fencedBlock, shellToolsFor } from '../support/doc-blocks.js'

const MARKER = 'change-log-example.test.ts runs this block'

const hasTools = shellToolsFor('the change log example test')

const doc = readFileSync(join(PROJECT_ROOT, 'docs/change-log.md'), 'utf8')
const example = fencedBlock(doc, Math.max(doc.indexOf(MARKER), 0), 'sh')
const promised = fencedBlock(doc, example.end, 'text').text.trimEnd().split('\n')

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
/** A promised line as a pattern: `…` matches anything without a quote (a time, an id). */
const pattern = (line: string) => new RegExp('^' + line.split('…').map(escape).join('[^"]+') + '$')

async function runBash (script: string, env: Record<string, string>): Promise<{ status: number | null, stdout: string, stderr: string }> {
  const child = spawn('bash', ['--noprofile', '--norc', '-c', script], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const guard = setTimeout(() => child.kill('SIGKILL'), 20_000)
  const status = await new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
  clearTimeout(guard)
  return { status, stdout, stderr }
}

describe.skipIf(!hasTools)('docs/change-log.md, pasted into bash', () => {
  let app: TestApp
  let env: Record<string, string>
  beforeAll(async () => {
    app = await startTestApp()
    // Where the README's walkthrough leaves off.
    const token = await signup(app.url, 'alice', 'a long walkthrough passphrase')
    await createProject(app.url, token, 'demo')
    const { key } = await createKey(app.url, token, { name: 'my script', permission: 'write' })
    const r = await call(app.url, 'POST', '/api/@alice/demo/content/increment', { token: key, body: { path: 'data.item.count', value: 5 } })
    expect(r.status).toBe(200)
    env = { PATH: process.env.PATH ?? '', B: app.url, TOKEN: token, KEY: key }
  })
  afterAll(async () => { await app.close() })

  it('the marker names a block, followed by its output', () => {
    expect(doc.indexOf(MARKER)).toBeGreaterThan(0)
    expect(promised.length).toBe(5)
  })

  it('prints what the document says it prints', async () => {
    // Asynchronously: the server runs in this process.
    const run = await runBash(example.text, env)
    expect(run.status, run.stderr).toBe(0)
    const lines = run.stdout.trimEnd().split('\n')
    expect(lines.length, run.stdout).toBe(promised.length)
    promised.forEach((line, i) => expect(lines[i]).toMatch(pattern(line)))
  })
})
