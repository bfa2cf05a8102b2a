// What the server loads at start (BENCHMARKS.md, the memory scenario): libraries only some
// deployments use are loaded when first needed, not at start. The Redis client (~400 modules,
// ~4 MiB of live heap) only with REDIS_URL (server/redis-connection.ts); CEL with protobuf
// and RE2 (~4 MiB) only when a rules expression is first compiled (server/rules/expression.ts);
// Ajv only when a schema is first checked or compiled (server/schema/compile.ts), jose only
// when an app token is verified or a key set saved (server/services/jose.ts), and the
// common-password list only at the first signup, without the rest of its package
// (server/auth/password-policy.ts).
import { readFileSync, rmSync } from 'node:fs'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { PROJECT_ROOT, freePort, makeDataDir } from '../support/server-process.js'

const LAZY = /\/node_modules\/(redis|@redis\/[^/]+|@bufbuild\/cel|ajv|jose|@zxcvbn-ts\/language-common)\//

/** Starts the built server with the module log, waits until it answers, stops it: what it loaded. */
async function modulesLoadedAtStart (): Promise<{ imported: string[], required: string[] }> {
  const port = await freePort()
  const dataDir = makeDataDir()
  const log = join(dataDir, 'modules.json')
  const child = spawn(process.execPath, ['--import', join(PROJECT_ROOT, 'test/support/module-log.mjs'), join(PROJECT_ROOT, 'dist/server/index.js')], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', MODULE_LOG: log },
    stdio: ['ignore', 'ignore', 'pipe']
  })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
  try {
    const deadline = Date.now() + 20_000
    for (;;) {
      if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}: ${stderr}`)
      try {
        if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) break
      } catch { /* not listening yet */ }
      if (Date.now() > deadline) throw new Error(`server did not start: ${stderr}`)
      await new Promise(resolve => setTimeout(resolve, 50))
    }
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
    return JSON.parse(readFileSync(log, 'utf8')) as { imported: string[], required: string[] }
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL')
    rmSync(dataDir, { recursive: true, force: true })
  }
}

describe('libraries loaded only when used', () => {
  it('a node without REDIS_URL, before any rules, schema, app token or signup loads none of the Redis client, CEL, Ajv, jose and the password list', async () => {
    const { imported, required } = await modulesLoadedAtStart()
    // The log works: it saw the server's own modules and a library every start loads.
    expect(imported.some(url => url.endsWith('/dist/server/node.js'))).toBe(true)
    expect(imported.concat(required).some(path => path.includes('/node_modules/better-sqlite3/'))).toBe(true)
    expect(imported.filter(url => LAZY.test(url))).toEqual([])
    expect(required.filter(path => LAZY.test(path))).toEqual([])
  }, 30_000)
})
