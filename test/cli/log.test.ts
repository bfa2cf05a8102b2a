// `contentd log` (docs/cli.md) as built, on the data directory of a real server process that
// the test writes through over HTTP: lines, --json, --since, --follow until SIGINT, errors.
import { withoutStoreLine } from '../support/cli-output.js'
import { spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, ownerWithProject } from '../support/http.js'
import { PROJECT_ROOT, startServerProcess, type ServerProcess } from '../support/server-process.js'
import { until } from '../support/wait.js'

const CLI = join(PROJECT_ROOT, 'dist/server/cli/main.js')
let server: ServerProcess

interface Run { code: number | null, stdout: string, stderr: string }

function start (args: string[]) {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: PROJECT_ROOT, env: { ...process.env, DATA_DIR: server.dataDir, HISTORY_LIMIT: '10', LOG_LEVEL: 'silent' }, stdio: ['ignore', 'pipe', 'pipe'] })
  const run: Run = { code: null, stdout: '', stderr: '' }
  child.stdout.on('data', (c: Buffer) => { run.stdout += c.toString() })
  child.stderr.on('data', (c: Buffer) => { run.stderr += c.toString() })
  const done = new Promise<Run>(resolve => child.on('close', code => { run.code = code; run.stderr = withoutStoreLine(run.stderr, server.dataDir); resolve(run) }))
  return { child, run, done }
}
const cli = (args: string[]) => start(args).done

beforeAll(async () => { server = await startServerProcess({ env: { HISTORY_LIMIT: '10' } }) })
afterAll(async () => {
  await server?.stop()
  rmSync(server.dataDir, { recursive: true, force: true })
})

describe('contentd log', { timeout: 60_000 }, () => {
  let key = ''
  let keyId = ''
  let session = ''
  let path = ''

  it('prints one line per change: version, time, who, what', async () => {
    ({ key, keyId, session, path } = await ownerWithProject(server.url, 'clilog'))
    await call(server.url, 'POST', `${path}/content/set`, { token: session, body: { path: 'title', value: 'Hello' } })
    await call(server.url, 'POST', `${path}/content/increment`, { token: key, body: { path: 'n', value: 2 } })
    await call(server.url, 'POST', `${path}/content/insert`, { token: key, body: { path: 'list', index: 0, value: 'a' } })
    await call(server.url, 'POST', `${path}/content/delete`, { token: key, body: { path: 'title' } })
    await call(server.url, 'POST', `${path}/content/revert`, { token: key, body: { version: 1 } })
    const run = await cli(['log', '@clilog/demo'])
    expect(run).toMatchObject({ code: 0, stderr: '' })
    const lines = run.stdout.trimEnd().split('\n')
    expect(lines.map(l => l.split('\t').filter((_, i) => i !== 1))).toEqual([
      ['1', '@clilog', 'set title "Hello"'],
      ['2', `key "writer" (${keyId})`, 'increment n 2'],
      ['3', `key "writer" (${keyId})`, 'insert list at 0 "a"'],
      ['4', `key "writer" (${keyId})`, 'delete title'],
      ['5', `key "writer" (${keyId})`, 'revert to version 1']
    ])
    expect(lines.every(l => /^\d+\t\d{4}-\d\d-\d\dT[\d:.]+Z\t/.test(l))).toBe(true)
  })

  it('--json prints the entries as the changes API has them; --since starts after a version', async () => {
    const run = await cli(['log', '@clilog/demo', '--since', '3', '--json'])
    expect(run.code).toBe(0)
    const api = await call(server.url, 'GET', `${path}/content/changes?since=3`, { token: key })
    expect(run.stdout.trimEnd().split('\n').map(l => JSON.parse(l) as unknown)).toEqual(api.body.changes)
  })

  it('--follow prints changes as they are committed, until SIGINT', async () => {
    const follower = start(['log', '@clilog/demo', '--since', '5', '--follow'])
    await new Promise(resolve => setTimeout(resolve, 800))
    expect(follower.run.stdout).toBe('')
    await call(server.url, 'POST', `${path}/content/push`, { token: key, body: { path: 'list', value: 'b' } })
    await until(() => follower.run.stdout.includes('push list "b"'), 'the followed change', 10_000)
    await call(server.url, 'POST', `${path}/content/increment`, { token: key, body: { path: 'n' } })
    await until(() => follower.run.stdout.trimEnd().split('\n').length === 2, 'the second change', 10_000)
    follower.child.kill('SIGINT')
    const run = await follower.done
    expect(run.code).toBe(0)
    expect(run.stdout.trimEnd().split('\n').map(l => l.split('\t')[0])).toEqual(['6', '7'])
  })

  it('refuses a bad --since (exit 2), a version beyond the history kept or an unknown project (exit 1)', async () => {
    const bad = await cli(['log', '@clilog/demo', '--since', '-3'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('usage: contentd log')
    const future = await cli(['log', '@clilog/demo', '--since', '99'])
    expect([future.code, future.stderr]).toEqual([1, expect.stringContaining('INVALID_VERSION')])
    for (let i = 0; i < 12; i++) await call(server.url, 'POST', `${path}/content/increment`, { token: key, body: { path: 'n' } })
    const expired = await cli(['log', '@clilog/demo'])
    expect([expired.code, expired.stderr]).toEqual([1, expect.stringMatching(/oldest version kept is 9 .*HISTORY_EXPIRED/)])
    const missing = await cli(['log', '@clilog/nothere'])
    expect([missing.code, missing.stderr]).toEqual([1, expect.stringContaining('PROJECT_NOT_FOUND')])
  })
})

describe('contentd log --path (docs/design.md §15)', { timeout: 60_000 }, () => {
  it('prints only the changes that touch the path, as changes?path= answers them; --json the entries', async () => {
    const { key, path } = await ownerWithProject(server.url, 'clilogpath')
    const post = async (op: string, body: unknown) => expect((await call(server.url, 'POST', `${path}/content/${op}`, { token: key, body })).status).toBe(200)
    await post('set', { path: 'votes', value: { up: 0 } })
    await post('increment', { path: 'other' })
    await post('increment', { path: 'votes.up' })
    await post('set', { path: 'secret', value: 'hidden' })
    const lines = await cli(['log', '@clilogpath/demo', '--path', 'votes.up'])
    expect(lines.code).toBe(0)
    expect(lines.stdout.trim().split('\n').map(line => line.split('\t').slice(0, 1).concat(line.split('\t').slice(3)))).toEqual([['1', 'set votes.up 0 (projected)'], ['3', 'increment votes.up 1']])
    const json = await cli(['log', '@clilogpath/demo', '--path', 'votes', '--json'])
    const fromApi = await call(server.url, 'GET', `${path}/content/changes?path=votes`, { token: key })
    expect(json.stdout.trim().split('\n').map(line => JSON.parse(line) as unknown)).toEqual(fromApi.body.changes)
    expect(json.stdout).not.toContain('hidden')
    const bad = await cli(['log', '@clilogpath/demo', '--path', 'a..b'])
    expect([bad.code, bad.stderr]).toEqual([1, expect.stringContaining('INVALID_PATH')])
  })
})
