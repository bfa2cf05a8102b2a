// `contentd webhook add|list|rm|deliveries` as built (dist/server/cli/main.js), on a temp
// DATA_DIR; a real server on the same directory delivers to a loopback receiver what the
// CLI set up, signed with the secret the CLI printed.
import { withoutStoreLine } from '../support/cli-output.js'
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { call, signup } from '../support/http.js'
import { openSqliteStore } from '../support/stores.js'
import { makeDataDir, PROJECT_ROOT, startServerProcess, type ServerProcess } from '../support/server-process.js'
import { until } from '../support/wait.js'
import { eventually, startReceiver, type Receiver } from './receiver.js'

const CLI = join(PROJECT_ROOT, 'dist/server/cli/main.js')
const dataDir = makeDataDir()
const env = { WEBHOOK_ALLOW_PRIVATE: 'true' }
let server: ServerProcess | undefined
let receiver: Receiver | undefined

afterAll(async () => {
  await server?.stop()
  await receiver?.stop()
  rmSync(dataDir, { recursive: true, force: true })
})

interface Run { code: number | null, stdout: string, stderr: string }

function cli (args: string[], extraEnv: Record<string, string> = env): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: PROJECT_ROOT, env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c: Buffer) => { stdout += c.toString() })
    child.stderr.on('data', (c: Buffer) => { stderr += c.toString() })
    child.on('error', reject)
    child.on('close', code => resolve({ code, stdout, stderr: withoutStoreLine(stderr, extraEnv.DATA_DIR ?? dataDir) }))
  })
}

describe('contentd webhook', () => {
  it('adds, lists, shows deliveries and removes webhooks; the server delivers what it added', async () => {
    receiver = await startReceiver()
    server = await startServerProcess({ dataDir, env })
    const session = await signup(server.url, 'mia')
    expect((await call(server.url, 'POST', '/api/projects', { token: session, body: { slug: 'site' } })).status).toBe(201)

    const added = await cli(['webhook', 'add', '@mia/site', receiver.url, '--path', 'pages', '--op', 'set', '--description', 'rebuild'])
    expect(added, added.stderr).toMatchObject({ code: 0 })
    expect(added.stdout).toMatch(/^Created webhook whk_\S+ for @mia\/site → http:\/\/127\.0\.0\.1:\d+\/hook \(changes after version 0\); signing secret, shown once: whsec_\S+\n$/)
    const id = (/(whk_\S+)/.exec(added.stdout) as RegExpExecArray)[1] as string
    const secret = added.stdout.trim().split(' ').pop() as string

    const listed = await cli(['webhook', 'list', '@mia/site'])
    expect(listed.code).toBe(0)
    expect(listed.stdout).toContain(`${id}\tenabled\tcursor 0\t${receiver.url}\tpaths pages\tops set\trebuild`)
    expect(listed.stdout).not.toContain(secret)

    expect((await call(server.url, 'POST', '/api/@mia/site/content/set', { token: session, body: { path: 'pages.home', value: 'hi' } })).status).toBe(200)
    await until(() => receiver!.received.length === 1, 'the delivery', 10_000)
    receiver.verifyAll(secret)
    // The node records the attempt once the receiver has answered, a moment after it arrived.
    const { url } = server
    const recorded = async () => (await call(url, 'GET', `/api/@mia/site/webhooks/${id}/deliveries`, { token: session })).body.deliveries.length === 1
    await eventually(recorded, 'the delivery recorded')
    const deliveries = await cli(['webhook', 'deliveries', id])
    expect(deliveries.stdout).toMatch(/^\d{4}-\d\d-\d\dT\S+\tv1\tdelivered\t204\tattempt 1\t\d+ ms\t\n$/)

    expect(await cli(['webhook', 'rm', id])).toMatchObject({ code: 0, stdout: `Deleted webhook ${id}\n` })
    expect((await cli(['webhook', 'list', '@mia/site'])).stdout).toBe('@mia/site has no webhooks.\n')
    expect(await cli(['webhook', 'rm', id])).toMatchObject({ code: 1, stderr: 'contentd: Webhook not found (WEBHOOK_NOT_FOUND)\n' })
  }, 60_000)

  it.each([
    [['webhook', 'add', '@mia/site', 'https://127.0.0.1/x'], {}, 1, /WEBHOOK_URL_FORBIDDEN/],
    [['webhook', 'add', '@mia/site', 'http://203.0.113.9/x'], {}, 1, /WEBHOOK_URL_FORBIDDEN/],
    [['webhook', 'add', '@mia/site', 'not-a-url'], env, 2, /^contentd: URL must be an absolute http\(s\) URL.*\nusage: contentd webhook add/],
    [['webhook', 'add', '@mia/site', 'https://203.0.113.9/x', '--op', 'explode'], env, 2, /--op/],
    [['webhook', 'add', 'mia-site', 'https://203.0.113.9/x'], env, 2, /not a project reference/],
    [['webhook', 'list', '@mia/nope'], env, 1, /PROJECT_NOT_FOUND/],
    [['webhook', 'deliveries', 'whk_nope'], env, 1, /WEBHOOK_NOT_FOUND/],
    [['webhook', 'add', '@mia/site'], env, 2, /expected 2 arguments, got 1/]
  ])('%j is refused', async (args, extraEnv, code, stderr) => {
    const run = await cli(args, extraEnv as Record<string, string>)
    expect(run.code, run.stderr).toBe(code)
    expect(run.stderr).toMatch(stderr)
    expect(run.stderr).not.toMatch(/\n\s+at /)
  }, 30_000)
})

// docs/design.md §13b: `webhook list` reads every page (here 103 webhooks, more than one page
// of 100), and `webhook add` is held to MAX_WEBHOOKS_PER_PROJECT like the API.
describe('contentd webhook with many webhooks', () => {
  const manyDir = makeDataDir()
  afterAll(() => { rmSync(manyDir, { recursive: true, force: true }) })
  const run = (args: string[], extraEnv: Record<string, string>) => cli(args, { DATA_DIR: manyDir, ...extraEnv })

  it('lists all 103 across pages, and refuses a 104th at a limit of 103', async () => {
    const store = openSqliteStore({ dataDir: manyDir, contentLimitBytes: 1024 * 1024, cacheBytes: 0 })
    await store.init()
    const user = { id: randomUUID(), username: 'ned', passwordHash: 'x', createdAt: new Date().toISOString() }
    await store.createUser(user)
    const project = await store.createProject({ id: randomUUID(), ownerId: user.id, ownerName: 'ned', slug: 'site', name: 'site', createdAt: new Date().toISOString() })
    const ids: string[] = []
    for (let i = 0; i < 103; i++) {
      const id = `whk_${String(i).padStart(3, '0')}`
      ids.push(id)
      await store.webhooks.create({
        id, projectId: project.id, url: `https://93.184.215.14/${i}`, paths: null, ops: null, description: null, secretCiphertext: 'sealed',
        createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), cursor: 0, failures: 0, failingSince: null, nextAttemptAt: null,
        disabledAt: null, disabledReason: null, leaseOwner: null, leaseUntil: null
      })
    }
    await store.close()

    const listed = await run(['webhook', 'list', '@ned/site'], {})
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout.trim().split('\n').map(line => line.split('\t')[0])).toEqual(ids)
    const refused = await run(['webhook', 'add', '@ned/site', 'https://93.184.215.14/more'], { MAX_WEBHOOKS_PER_PROJECT: '103' })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/QUOTA_EXCEEDED/)
  }, 60_000)
})
