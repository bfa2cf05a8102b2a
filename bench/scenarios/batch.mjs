// Batches (docs/design.md §10), in one server process and one run: single increment requests,
// batches of 100 increments (ops/s = batch req/s × 100), and whole-content updates of 1 MiB,
// whose server CPU per request bounds how long one of them holds the event loop; a batch
// must hold it no longer. The counter must end at exactly what the 2xx answers account for.
import { call, expectStatus } from '../lib/contentd.mjs'
import { documentOfSize } from '../lib/documents.mjs'
import { measure } from '../lib/load.mjs'
import { startContentd, owner } from '../lib/contentd.mjs'

const BATCH_SIZE = 100
const ONE_MIB_DOCUMENT = 1024 * 1024 - 512

export async function batch () {
  const server = await startContentd()
  try {
    const user = await owner(server.url, 'bench')
    const path = await user.project('demo', documentOfSize(1024))
    const url = server.url + path
    const headers = { authorization: `Bearer ${user.key}` }
    const readCounter = async () => (await expectStatus(call(server.url, 'GET', `${path}/content?path=counter`, { token: user.key }), 200, 'read counter')).body
    await expectStatus(call(server.url, 'POST', `${path}/content/set`, { token: user.key, body: { path: 'counter', value: 0 } }), 200, 'reset counter')
    const single = await measure({ url: `${url}/content/increment`, headers, body: JSON.stringify({ path: 'counter', value: 1 }), pid: server.pid })
    const operations = Array.from({ length: BATCH_SIZE }, () => ({ op: 'increment', path: 'counter', value: 1 }))
    const batched = await measure({ url: `${url}/content/batch`, headers, body: JSON.stringify({ operations }), pid: server.pid })
    // Warm-ups count too: compare the counter with every 2xx since the reset, both warm-ups included.
    const counted = await readCounter()
    const bigPath = await user.project('big', documentOfSize(ONE_MIB_DOCUMENT))
    const update = await measure({ url: `${server.url}${bigPath}/content`, headers, body: JSON.stringify(documentOfSize(ONE_MIB_DOCUMENT)), connections: 4, pid: server.pid })
    const singleOps = single.reqPerSec
    const batchOps = batched.reqPerSec * BATCH_SIZE
    const plausible = counted >= single.ok + BATCH_SIZE * batched.ok
    return [
      { scenario: 'single increment requests (batch comparison)', ...single, opsPerSec: singleOps },
      { scenario: `batch of ${BATCH_SIZE} increments per request`, ...batched, opsPerSec: batchOps, failed: batched.failed || !plausible, note: `${Math.round(batchOps).toLocaleString('en-US')} increments/s; counter ${counted}${plausible ? '' : ' LOWER THAN THE 2xx ANSWERS'}` },
      { scenario: 'update of a 1 MiB content (event-loop reference for a batch)', ...update }
    ]
  } finally {
    await server.stop()
  }
}
