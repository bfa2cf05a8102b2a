// Preloaded with `node --import` by test/integration/lazy-modules.test.ts: records every module
// the process imports (a resolve hook; in Node 20 it sees `import`, not `require`) and, at
// exit, writes them with the CommonJS modules `require` loaded to the file MODULE_LOG names.
import { writeFileSync } from 'node:fs'
import { createRequire, register } from 'node:module'
import { MessageChannel } from 'node:worker_threads'

const { port1, port2 } = new MessageChannel()
const imported = []
port1.on('message', url => { imported.push(url) })
port1.unref()
register('./module-log-hooks.mjs', import.meta.url, { data: { port: port2 }, transferList: [port2] })
process.on('exit', () => {
  const required = Object.keys(createRequire(import.meta.url).cache)
  writeFileSync(process.env.MODULE_LOG, JSON.stringify({ imported, required }))
})
