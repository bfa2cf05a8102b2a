// The offline store for Node (docs/design.md §19): one file per key in a directory. A put
// writes a temporary file, fsyncs it, renames it over the old one and fsyncs the directory,
// so a crash leaves either the old value or the new one, never half of one. node:fs is
// imported when first used, so this module loads in browsers too (where it is never called).
import type { Json } from '../../json.js'
import type { OfflineStore } from './storage.js'

type Fs = typeof import('node:fs/promises')
// Held in a variable, so bundlers building for browsers do not try to resolve it.
const NODE_FS = 'node:fs/promises'

// Keys become file names: every character but [A-Za-z0-9_-] escaped, so names are portable.
const fileOf = (key: string) => key.replace(/[^A-Za-z0-9_-]/g, c => '.' + c.charCodeAt(0).toString(16).padStart(4, '0')) + '.json'
const keyOf = (file: string) => file.slice(0, -'.json'.length).replace(/\.([0-9a-f]{4})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))

export function directoryStore (directory: string): OfflineStore {
  let fs: Promise<Fs> | undefined
  const ready = () => {
    fs ??= (import(NODE_FS) as Promise<Fs>).then(async module => { await module.mkdir(directory, { recursive: true }); return module })
    return fs
  }
  const path = (file: string) => `${directory}/${file}`
  let serial = 0
  return {
    kind: 'directory',
    async get (key) {
      const f = await ready()
      try {
        return JSON.parse(await f.readFile(path(fileOf(key)), 'utf8')) as Json
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
        throw error
      }
    },
    async put (key, value) {
      const f = await ready()
      const temporary = path(`${fileOf(key)}.${process.pid}.${++serial}.tmp`)
      const handle = await f.open(temporary, 'w')
      try {
        await handle.writeFile(JSON.stringify(value))
        await handle.sync()
      } finally {
        await handle.close()
      }
      await f.rename(temporary, path(fileOf(key)))
      const dir = await f.open(directory, 'r')
      try { await dir.sync() } finally { await dir.close() }
    },
    async delete (key) {
      const f = await ready()
      await f.rm(path(fileOf(key)), { force: true })
    },
    async keys (prefix) {
      const f = await ready()
      return (await f.readdir(directory)).filter(file => file.endsWith('.json')).map(keyOf).filter(key => key.startsWith(prefix)).sort()
    }
  }
}
