// The README's walkthrough, run for real: the fenced block after the walkthrough marker is
// run with bash against the built server, and must print what the README says it prints
// (a token, the project, a key, the increment message and the content, each on its own line).
//
// The test changes exactly two things in the block, and checks that each occurs once:
// - the server line (`… npm start … &`) becomes the built server, `node dist/server/index.js`,
//   on a free port and a temporary DATA_DIR, its output in a file and its pid recorded so the
//   test can stop it (npm start would only add the build step, which the global setup did);
// - the base URL http://localhost:3000 becomes that port on 127.0.0.1.
// Everything else (curl, the health wait, the field helper) runs as a reader would paste it.
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort, PROJECT_ROOT } from '../support/server-process.js'
import { fencedBlock, shellToolsFor } from '../support/doc-blocks.js'

const MARKER = 'readme-walkthrough.test.ts runs this block'
const README_URL = 'http://localhost:3000'
const SERVER_LINE = /^.*\bnpm start\b.*&.*$/m

const hasTools = shellToolsFor('the README walkthrough test')

const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8')
const markerAt = readme.indexOf(MARKER)
const walkthrough = fencedBlock(readme, Math.max(markerAt, 0), 'sh')
const promised = fencedBlock(readme, walkthrough.end, 'text').text.trimEnd().split('\n')

interface Run { code: number | null, stdout: string, stderr: string }

describe.skipIf(!hasTools)('the README walkthrough, pasted into bash', () => {
  let dir: string
  let port: number
  let first: Run

  const pidFile = () => join(dir, 'server.pid')

  /** Runs the block with its server line replaced by `serverLine`; stops bash after 60 s. */
  async function runBlock (serverLine: string): Promise<Run> {
    const script = walkthrough.text
      .replace(SERVER_LINE, serverLine)
      .replaceAll(README_URL, `http://127.0.0.1:${port}`)
    const file = join(dir, `walkthrough-${Date.now()}.sh`)
    writeFileSync(file, script)
    const child = spawn('bash', [file], {
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: dir,
        CONTENTD_ENTRY: join(PROJECT_ROOT, 'dist/server/index.js'),
        CONTENTD_LOG: join(dir, 'server.log'),
        CONTENTD_PID_FILE: pidFile(),
        PORT: String(port),
        HOST: '127.0.0.1',
        DATA_DIR: join(dir, 'data'),
        LOG_LEVEL: 'warn'
      },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
    const guard = setTimeout(() => child.kill('SIGKILL'), 60_000)
    const code = await new Promise<number | null>(resolve => child.once('exit', exitCode => resolve(exitCode)))
    clearTimeout(guard)
    return { code, stdout, stderr }
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'contentd-walkthrough-'))
    port = await freePort()
    first = await runBlock('node "$CONTENTD_ENTRY" >"$CONTENTD_LOG" 2>&1 & echo $! >"$CONTENTD_PID_FILE"')
  }, 90_000)

  afterAll(async () => {
    if (dir && existsSync(pidFile())) {
      const pid = Number(readFileSync(pidFile(), 'utf8'))
      try { process.kill(pid, 'SIGTERM') } catch { /* already gone */ }
      for (let i = 0; i < 100; i++) {
        try { process.kill(pid, 0) } catch { break }
        await new Promise(resolve => setTimeout(resolve, 100))
      }
    }
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('the README has the marked block, one server line and one base URL in it', () => {
    expect(markerAt).toBeGreaterThan(-1)
    expect(walkthrough.text.match(new RegExp(SERVER_LINE.source, 'gm'))).toHaveLength(1)
    expect(walkthrough.text.split(README_URL)).toHaveLength(2)
  })

  it('runs cleanly and prints a token, the project, a key, the increment message and the content', () => {
    expect(first.stderr).toBe('')
    expect(first.code).toBe(0)
    const lines = first.stdout.trimEnd().split('\n')
    expect(lines).toContainEqual(expect.stringMatching(/^token: cds_[A-Za-z0-9_-]{43}$/))
    expect(lines).toContainEqual(expect.stringMatching(/^key: cdk_[A-Za-z0-9_-]{43}$/))
    expect(lines).toContain('{"message":"Value incremented successfully"}')
    expect(lines).toContain('{"data":{"item":{"count":5}}}')
  })

  it('prints exactly what the README says it prints, line by line', () => {
    const patterns = promised.map(line => new RegExp('^' + line.split('…').map(part => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.+') + '$'))
    const lines = first.stdout.trimEnd().split('\n')
    expect(lines).toHaveLength(patterns.length)
    lines.forEach((line, i) => expect(line).toMatch(patterns[i] as RegExp))
  })

  it('a second run on the same data fails visibly at sign-up, as the README says', async () => {
    const second = await runBlock(': the server from the first run is still up')
    expect(second.stdout).not.toMatch(/^token: /m)
    expect(second.stderr).toContain('USERNAME_TAKEN')
  })
})
