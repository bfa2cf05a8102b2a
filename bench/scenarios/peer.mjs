// The peer: json-server (npm, lowdb writing the whole db.json file on every change) serving
// the same ~1 MiB document as one resource, changed with a PATCH of one field — the closest
// equivalent of contentd's increment on a 1 MiB content.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { call, expectStatus } from '../lib/contentd.mjs'
import { documentOfSize } from '../lib/documents.mjs'
import { measure } from '../lib/load.mjs'
import { PROJECT_ROOT, freePort, startChild, tempDir } from '../lib/processes.mjs'

export async function peer () {
  const dir = tempDir('json-server')
  const file = join(dir, 'db.json')
  writeFileSync(file, JSON.stringify({ docs: [{ id: 1, ...documentOfSize(1024 * 1024 - 512) }] }))
  const port = await freePort()
  const server = await startChild({
    name: 'json-server',
    args: [join(PROJECT_ROOT, 'node_modules/json-server/lib/cli/bin.js'), file, '--port', String(port), '--host', '127.0.0.1', '--quiet'],
    port,
    readyPath: '/docs/1?_fields=id',
    cleanup: [dir]
  })
  try {
    const check = await expectStatus(call(server.url, 'PATCH', '/docs/1', { body: { counter: 1 } }), 200, 'json-server PATCH')
    if (check.body.counter !== 1) throw new Error('json-server did not apply the PATCH')
    const result = await measure({ url: `${server.url}/docs/1`, method: 'PATCH', body: JSON.stringify({ counter: 2 }), pid: server.pid })
    return { scenario: 'peer: json-server 0.17 PATCH on a 1 MiB resource', ...result }
  } finally {
    await server.stop()
  }
}
