// Issue 12: a full disk answered 500. It is 503 STORE_UNAVAILABLE now, the failed write
// changes nothing, and the server takes writes again as soon as space returns, without a
// restart.
//
// A real full disk: the server's DATA_DIR is on a small tmpfs, filled up with a file; deleting
// the file gives the space back. Mounting needs root (CI runs as root). Without it the test is
// skipped loudly outside CI and fails under CI=true. (SQLite's PRAGMA max_page_count would
// give SQLITE_FULL without root, but only on the connection that sets it, inside the server;
// a real filesystem exercises the same code path from the outside, WAL file included.)
import { execFileSync } from 'node:child_process'
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, ownerWithProject } from '../support/http.js'
import { startServerProcess, type ServerProcess } from '../support/server-process.js'

const MOUNT_SIZE = '24m'
const BIG = 2 * 1024 * 1024

let mountPoint: string | undefined
let reason = ''
try {
  mountPoint = mkdtempSync(join(tmpdir(), 'contentd-diskfull-'))
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${MOUNT_SIZE}`, 'tmpfs', mountPoint], { stdio: 'pipe' })
} catch (e) {
  reason = e instanceof Error ? e.message.split('\n')[0] ?? '' : String(e)
  if (mountPoint) rmSync(mountPoint, { recursive: true, force: true })
  mountPoint = undefined
}
if (!mountPoint) {
  if (process.env.CI === 'true') throw new Error(`disk-full test: cannot mount a tmpfs (${reason}); CI must run as root`)
  console.warn(`!!! DISK FULL test SKIPPED: cannot mount a tmpfs (needs root): ${reason} !!!`)
}

let server: ServerProcess
let key: string
let path: string
const filler = () => join(mountPoint as string, 'filler')

/** Writes zeros into a file until the filesystem refuses (ENOSPC). */
function fillTheDisk (): void {
  const fd = openSync(filler(), 'w')
  const chunk = Buffer.alloc(64 * 1024)
  try {
    for (;;) writeSync(fd, chunk)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e
    // The last partial chunk may have left a little room: take it byte-sized.
    try { for (;;) writeSync(fd, chunk, 0, 512) } catch { /* full */ }
  } finally {
    closeSync(fd)
  }
}

async function content (): Promise<{ version: number, body: Record<string, unknown> }> {
  const r = await call(server.url, 'GET', `${path}/content`, { token: key })
  expect(r.status).toBe(200)
  return { version: Number(JSON.parse(r.headers.get('etag') ?? 'null')), body: r.body }
}

describe.skipIf(!mountPoint)('a full disk (issue 12)', () => {
  beforeAll(async () => {
    const dataDir = join(mountPoint as string, 'data')
    mkdirSync(dataDir)
    server = await startServerProcess({ dataDir, env: { BODY_LIMIT: String(4 * 1024 * 1024), LOG_LEVEL: 'fatal' } })
    ;({ key, path } = await ownerWithProject(server.url, 'alice'))
    expect((await call(server.url, 'POST', `${path}/content/set`, { token: key, body: { path: 'kept', value: 1 } })).status).toBe(200)
    fillTheDisk()
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
    if (mountPoint) {
      try { execFileSync('umount', [mountPoint], { stdio: 'pipe' }) } catch { /* already gone */ }
      rmSync(mountPoint, { recursive: true, force: true })
    }
  })

  it('a write that needs space is 503 STORE_UNAVAILABLE, changes nothing, and the server keeps serving', async () => {
    const before = await content()
    for (let attempt = 0; attempt < 3; attempt++) {
      const r = await call(server.url, 'POST', `${path}/content/set`, { token: key, body: { path: 'big', value: 'x'.repeat(BIG) } })
      expect(r.status, r.text).toBe(503)
      expect(r.body).toEqual({ message: 'The store is unavailable; retry later', code: 'STORE_UNAVAILABLE' })
    }
    expect(await content()).toEqual(before)
    expect((await call(server.url, 'GET', '/healthz')).status).toBe(200)
    expect(server.child.exitCode).toBeNull()
  })

  it('once space returns, the next write succeeds, with the next version, and survives a restart', async () => {
    const before = await content()
    rmSync(filler())
    const r = await call(server.url, 'POST', `${path}/content/set`, { token: key, body: { path: 'big', value: 'x'.repeat(BIG) } })
    expect(r.status, r.text).toBe(200)
    expect(r.headers.get('etag')).toBe(`"${before.version + 1}"`)
    expect((await call(server.url, 'POST', `${path}/content/increment`, { token: key, body: { path: 'kept' } })).status).toBe(200)
    const after = await content()
    expect(after.version).toBe(before.version + 2)
    expect(after.body.kept).toBe(2)
    expect((after.body.big as string).length).toBe(BIG)
    // Acknowledged means stored: the same data after a restart.
    await server.stop()
    server = await startServerProcess({ dataDir: server.dataDir, env: { LOG_LEVEL: 'fatal' } })
    expect(await content()).toEqual(after)
  })
})
