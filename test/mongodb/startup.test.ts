// The real server (node dist/server/index.js) with STORE=mongodb pointed at a loopback port
// where nothing listens: the real driver times out selecting a server, and the process must
// exit non-zero with ONE line naming MongoDB, no stack trace, no password. This exercises
// the actual start-up path; it needs no MongoDB server.
import { rmSync } from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import { freePort, makeDataDir, runServerUntilExit } from '../support/server-process.js'

const dirs: string[] = []
afterAll(() => { for (const dir of dirs) rmSync(dir, { recursive: true, force: true }) })

function startAndWaitForExit (env: Record<string, string>) {
  const dataDir = makeDataDir()
  dirs.push(dataDir)
  return runServerUntilExit({ DATA_DIR: dataDir, ...env })
}

describe('STORE=mongodb start-up against an unreachable MongoDB', () => {
  it('exits non-zero within the server-selection timeout with one clear line naming MongoDB', { timeout: 60_000 }, async () => {
    const deadPort = await freePort() // nothing listens there
    const exit = await startAndWaitForExit({ STORE: 'mongodb', MONGODB_URI: `mongodb://127.0.0.1:${deadPort}/x` })
    expect(exit.code).not.toBe(0)
    expect(exit.code).not.toBeNull() // exited by itself, not killed by the guard
    const lines = exit.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(new RegExp(`^contentd: cannot open the mongodb store: MongoDB at 127\\.0\\.0\\.1:${deadPort} is unreachable \\(server selection timed out after 5000 ms`))
    expect(exit.stderr).not.toMatch(/\n\s+at /)
    // The 5 s selection timeout plus loading the server, with room for a loaded machine; the
    // driver's default (30 s) would fail this.
    expect(exit.ms).toBeLessThan(25_000)
  })

  it('never prints the password from MONGODB_URI', { timeout: 60_000 }, async () => {
    const deadPort = await freePort()
    const exit = await startAndWaitForExit({ STORE: 'mongodb', MONGODB_URI: `mongodb://app:Sup3rSecretPw@127.0.0.1:${deadPort}/x?authSource=admin` })
    expect(exit.code).not.toBe(0)
    expect(exit.code).not.toBeNull()
    expect(exit.stderr).toMatch(/MongoDB at 127\.0\.0\.1:\d+ is unreachable/)
    expect(exit.stderr + exit.stdout).not.toContain('Sup3rSecretPw')
  })
})
