// `contentd patch @name/slug file.json` (docs/design.md §10), as built: an RFC 6902 patch from a
// file or stdin applied as one change by the operator; a bad or inapplicable patch changes
// nothing and ends with one line and exit 1.
import { withoutStoreLine } from '../support/cli-output.js'
import { spawn } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeDataDir, PROJECT_ROOT } from '../support/server-process.js'

const CLI = join(PROJECT_ROOT, 'dist/server/cli/main.js')
let dataDir: string

function cli (args: string[], input = ''): Promise<{ code: number | null, stdout: string, stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: PROJECT_ROOT, env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' }, stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c: Buffer) => { stdout += c.toString() })
    child.stderr.on('data', (c: Buffer) => { stderr += c.toString() })
    child.on('error', reject)
    child.on('close', code => resolve({ code, stdout, stderr: withoutStoreLine(stderr, dataDir) }))
    child.stdin.end(input)
  })
}

beforeAll(() => { dataDir = makeDataDir() })
afterAll(() => { rmSync(dataDir, { recursive: true, force: true }) })

describe('contentd patch', { timeout: 120_000 }, () => {
  it('applies a patch file atomically as one version; refuses a failing one, changing nothing', async () => {
    expect((await cli(['user', 'create', '@pat', '--password', 'pat password 123', '--init'])).code).toBe(0)
    expect((await cli(['project', 'create', '@pat/demo'])).code).toBe(0)
    expect((await cli(['import', '@pat/demo'], JSON.stringify({ price: 10, tags: ['a'] }))).code).toBe(0)
    const file = join(dataDir, 'patch.json')
    writeFileSync(file, JSON.stringify([{ op: 'test', path: '/price', value: 10 }, { op: 'replace', path: '/price', value: 12 }, { op: 'add', path: '/tags/-', value: 'b' }]))
    expect(await cli(['patch', '@pat/demo', file])).toEqual({ code: 0, stdout: 'Patched @pat/demo (version 2)\n', stderr: '' })
    expect(JSON.parse((await cli(['export', '@pat/demo'])).stdout)).toEqual({ price: 12, tags: ['a', 'b'] })

    const failing = await cli(['patch', '@pat/demo', '-'], JSON.stringify([{ op: 'remove', path: '/tags' }, { op: 'test', path: '/price', value: 10 }]))
    expect(failing.code).toBe(1)
    expect(failing.stderr).toMatch(/^contentd: A test operation failed.*operation 1.*\(TEST_FAILED\)\n$/)
    expect((await cli(['patch', '@pat/demo', '-'], '{"op":"add"}')).stderr).toContain('(INVALID_PATCH)')
    expect((await cli(['patch', '@pat/demo', join(dataDir, 'missing.json')])).code).toBe(2)
    expect(JSON.parse((await cli(['export', '@pat/demo'])).stdout)).toEqual({ price: 12, tags: ['a', 'b'] })
  })
})
