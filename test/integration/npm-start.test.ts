// `npm start` as the README runs it: it listens on loopback unless told otherwise (HOST
// defaults to 127.0.0.1, docs/configuration.md), and a SIGTERM to the pid npm reports stops
// the server, not only npm (package.json's start execs scripts/start.mjs, which runs the
// server in its own process; the shell of "build && node …" used to die and leave the server
// listening).
import { spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import { networkInterfaces } from 'node:os'
import { afterAll, describe, expect, it } from 'vitest'
import { freePort, makeDataDir, PROJECT_ROOT } from '../support/server-process.js'

const answers = async (url: string) => {
  try { return (await fetch(url, { signal: AbortSignal.timeout(1000) })).ok } catch { return false }
}
const dataDirs: string[] = []
afterAll(() => { for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true }) })

describe('npm start', () => {
  it('listens on 127.0.0.1 by default, and SIGTERM to the npm pid stops the server', async () => {
    const port = await freePort()
    const dataDir = makeDataDir()
    dataDirs.push(dataDir)
    // HOST empty counts as unset: the default applies.
    const npm = spawn('npm', ['start'], { cwd: PROJECT_ROOT, env: { ...process.env, HOST: '', PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    npm.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
    npm.stderr.on('data', (chunk: Buffer) => { output += chunk.toString() })
    const exited = new Promise<number | null>(resolve => npm.once('exit', code => resolve(code)))
    try {
      const url = `http://127.0.0.1:${port}`
      const deadline = Date.now() + 30_000
      while (!(await answers(`${url}/healthz`))) {
        if (npm.exitCode !== null || Date.now() > deadline) throw new Error(`npm start did not serve: ${output}`)
        await new Promise(resolve => setTimeout(resolve, 100))
      }
      expect(output).toContain(`contentd listening on http://127.0.0.1:${port}`)
      // Not reachable on the machine's other addresses (when it has any).
      const outside = Object.values(networkInterfaces()).flat().find(a => a && a.family === 'IPv4' && !a.internal)
      if (outside) expect(await answers(`http://${outside.address}:${port}/healthz`), outside.address).toBe(false)

      npm.kill('SIGTERM')
      expect(await exited).toBe(0)
      expect(await answers(`${url}/healthz`), 'the server still answers after npm stopped').toBe(false)
    } finally {
      if (npm.exitCode === null) npm.kill('SIGKILL')
    }
  })
})
