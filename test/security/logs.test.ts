// API8 (security misconfiguration) / no secrets in logs: the real server, logging at info,
// handles requests carrying session tokens, API keys, bogus tokens and passwords; none of
// them may appear anywhere in its output.
import { rmSync } from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import { call, ownerWithProject, PASSWORD } from '../support/http.js'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'
import { until } from '../support/wait.js'

let server: ServerProcess | undefined
afterAll(async () => {
  await server?.stop('SIGKILL')
  if (server) rmSync(server.dataDir, { recursive: true, force: true })
})

describe('logs', () => {
  it('never contain bearer tokens, API keys or passwords', async () => {
    server = await startServerProcess({ env: { LOG_LEVEL: 'info' } })
    const { session, key, path } = await ownerWithProject(server.url, 'logged')
    const bogus = 'cdk_this-is-a-guessed-key-0123456789'
    const password = 'a very particular password'
    await call(server.url, 'POST', `${path}/content/set`, { token: key, body: { path: 'a', value: 1 } })
    await call(server.url, 'GET', `${path}/content`, { token: session })
    await call(server.url, 'GET', '/api/me', { token: bogus })
    await call(server.url, 'POST', '/api/auth/login', { body: { username: 'logged', password } })
    await call(server.url, 'GET', '/api/me', { headers: { authorization: `Basic ${Buffer.from(`logged:${PASSWORD}`).toString('base64')}`, cookie: `session=${session}` } })
    // The child writes a request's line as the response finishes: wait for the last three (401s).
    await until(() => server!.output().split('"statusCode":401').length - 1 >= 3, 'the log lines of the three 401 answers')
    const output = server.output()
    for (const secret of [session, key, bogus, password, PASSWORD]) expect(output).not.toContain(secret)
    expect(output).not.toContain(Buffer.from(`logged:${PASSWORD}`).toString('base64'))
  })
})
