#!/usr/bin/env node
// npm start: compile if a source changed (build.mjs --if-stale), then run the server in this
// very process. One process, no shell in between: the SIGTERM or SIGINT npm passes on (or a
// `kill` of the pid the server logs) reaches the server itself, which shuts down cleanly.
// "build && node dist/server/index.js" ran the server under `sh -c`, which died on SIGTERM
// and left the server listening.
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'

const build = spawnSync(process.execPath, [join(import.meta.dirname, 'build.mjs'), '--if-stale'], { stdio: 'inherit' })
if (build.status !== 0) process.exit(build.status ?? 1)
await import('../dist/server/index.js')
