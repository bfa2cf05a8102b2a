// Where the offline SDK keeps its outbox and its copy of the content (docs/design.md §19): a
// small key-value interface, so one outbox and one copy work over IndexedDB (browsers), a
// directory (Node) or memory (tests). A `put` resolves only once the value is durable: the
// outbox relies on that before it lets a write's promise resolve.
import type { Json } from '../../json.js'

export interface OfflineStore {
  /** Which kind it is, for messages ("indexeddb", "directory", "memory"). */
  readonly kind: string
  get (key: string): Promise<Json | undefined>
  /** Resolves once the value is durable (survives a crash of the app from then on). */
  put (key: string, value: Json): Promise<void>
  delete (key: string): Promise<void>
  /** The keys that start with `prefix`, in ascending order. */
  keys (prefix: string): Promise<string[]>
}

/** Keeps everything in this process's memory: for tests, and for apps that want only optimistic writes. */
export function memoryStore (): OfflineStore {
  const values = new Map<string, string>()
  return {
    kind: 'memory',
    get: async key => { const text = values.get(key); return text === undefined ? undefined : JSON.parse(text) as Json },
    // Kept as JSON text: what is read back is a copy, as from a real store.
    put: async (key, value) => { values.set(key, JSON.stringify(value)) },
    delete: async key => { values.delete(key) },
    keys: async prefix => [...values.keys()].filter(key => key.startsWith(prefix)).sort()
  }
}
