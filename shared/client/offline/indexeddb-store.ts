// The offline store for browsers (docs/design.md §19): one IndexedDB database with one object
// store of keys and values, through the maintained `idb` wrapper. Every put is its own
// readwrite transaction with `durability: 'strict'` (Chromium's default is relaxed: a
// transaction may complete before the data is on disk), and resolves when it completes.
// `idb` is imported when the store is first used: a page that uses the SDK without the
// offline store needs no import-map entry for it.
import type { IDBPDatabase } from 'idb'
import type { Json } from '../../json.js'
import type { OfflineStore } from './storage.js'

const STORE = 'kv'

export function indexedDbStore (name = 'contentd-offline'): OfflineStore {
  let db: Promise<IDBPDatabase> | undefined
  const open = () => {
    db ??= import('idb').then(({ openDB }) => openDB(name, 1, { upgrade (database) { database.createObjectStore(STORE) } }))
    return db
  }
  return {
    kind: 'indexeddb',
    async get (key) {
      return await (await open()).get(STORE, key) as Json | undefined
    },
    async put (key, value) {
      const tx = (await open()).transaction(STORE, 'readwrite', { durability: 'strict' })
      await Promise.all([tx.store.put(value, key), tx.done])
    },
    async delete (key) {
      const tx = (await open()).transaction(STORE, 'readwrite', { durability: 'strict' })
      await Promise.all([tx.store.delete(key), tx.done])
    },
    async keys (prefix) {
      // Every key that starts with `prefix` sorts between it and prefix + U+FFFF.
      const keys = await (await open()).getAllKeys(STORE, IDBKeyRange.bound(prefix, prefix + '\uffff'))
      return keys.map(String).sort()
    }
  }
}
