// Memory: one server, 10,000 projects of 10 KiB content each, every one touched (read) once
// after all were written; then the server's RSS. The document cache is bounded by
// CACHE_BYTES (default used here), so RSS must stay flat however many projects exist.
import { call, expectStatus, owner, startContentd } from '../lib/contentd.mjs'
import { documentOfSize } from '../lib/documents.mjs'
import { rssBytes } from '../lib/processes.mjs'

const PROJECTS = Number(process.env.BENCH_MEMORY_PROJECTS ?? 10_000)
const CONTENT_BYTES = 10 * 1024
const PARALLEL = 16

async function inParallel (count, task) {
  let next = 0
  const worker = async () => { while (next < count) await task(next++) }
  await Promise.all(Array.from({ length: PARALLEL }, worker))
}

export async function memory () {
  // BENCH_CACHE_BYTES tries another cache budget; by default the server's own default is measured.
  // One user owns every project: past the default MAX_PROJECTS_PER_USER.
  const server = await startContentd({ MAX_PROJECTS_PER_USER: String(PROJECTS), ...(process.env.BENCH_CACHE_BYTES ? { CACHE_BYTES: process.env.BENCH_CACHE_BYTES } : {}) })
  try {
    const started = performance.now()
    const user = await owner(server.url, 'bench')
    const content = documentOfSize(CONTENT_BYTES)
    const paths = []
    await inParallel(PROJECTS, async i => { paths[i] = await user.project(`p${i}`, { ...content, counter: i }) })
    const afterWrites = rssBytes(server.pid)
    await inParallel(PROJECTS, async i => {
      const r = await expectStatus(call(server.url, 'GET', `${paths[i]}/content?path=counter`, { token: user.key }), 200, 'touch')
      if (r.body !== i) throw new Error(`project p${i} holds counter ${r.body}`)
    })
    await new Promise(r => setTimeout(r, 1000))
    const rss = rssBytes(server.pid)
    const rssMiB = rss / 1024 / 1024
    return {
      scenario: 'memory: projects created, written and touched once',
      kind: 'memory',
      projects: PROJECTS,
      contentKiB: CONTENT_BYTES / 1024,
      rssMiB,
      seconds: (performance.now() - started) / 1000,
      failed: false,
      note: `RSS after the writes ${(afterWrites / 1024 / 1024).toFixed(1)} MiB`
    }
  } finally {
    await server.stop()
  }
}
