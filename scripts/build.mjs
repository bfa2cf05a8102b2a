#!/usr/bin/env node
// Compiles server/, shared/ and console/ (the web console) into dist/ (tsc -p tsconfig.build.json).
//   node scripts/build.mjs             always compiles (npm run build)
//   node scripts/build.mjs --if-stale  compiles only when an input changed since the last
//                                      build (npm start, npm test, prepare)
// Why a stamp: even with nothing to do, tsc loads and checks the whole program (5-6 s on two
// cores), which every `npm start` paid. Comparing modification times costs milliseconds.
// The stamp's time is the moment the last successful compile STARTED, so a file saved while
// tsc was running counts as newer. Directories are inputs too: deleting or renaming a file
// changes its directory's time. A failed compile writes no stamp, so the next run retries.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

const ROOT = join(import.meta.dirname, '..')
const STAMP = join(ROOT, 'dist', '.build-stamp')
const INPUT_DIRECTORIES = ['server', 'shared', 'console']
// Not package-lock.json: npm rewrites it on every install (the prepare before a start), and the
// emitted JavaScript does not depend on it.
const INPUT_FILES = ['tsconfig.json', 'tsconfig.build.json', 'package.json']

/** The newest modification time (ms) among the inputs, directories included. */
function newestInput () {
  let newest = 0
  const visit = path => {
    const stat = statSync(path)
    newest = Math.max(newest, stat.mtimeMs)
    if (stat.isDirectory()) for (const entry of readdirSync(path)) visit(join(path, entry))
  }
  for (const dir of INPUT_DIRECTORIES) visit(join(ROOT, dir))
  for (const file of INPUT_FILES) if (existsSync(join(ROOT, file))) visit(join(ROOT, file))
  return newest
}

function isStale () {
  if (!existsSync(STAMP)) return true
  return newestInput() >= statSync(STAMP).mtimeMs
}

const ifStale = process.argv.includes('--if-stale')
if (ifStale && !isStale()) process.exit(0)
if (ifStale) process.stderr.write('contentd: compiling TypeScript into dist/ (first run or sources changed)…\n')

const startedAt = new Date()
// typescript is a devDependency: present in a clone after npm install, and npm installs it
// for a git dependency's prepare too.
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
const run = spawnSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, stdio: 'inherit' })
if (run.status !== 0) process.exit(run.status ?? 1)
mkdirSync(dirname(STAMP), { recursive: true })
writeFileSync(STAMP, '')
utimesSync(STAMP, startedAt, startedAt)
