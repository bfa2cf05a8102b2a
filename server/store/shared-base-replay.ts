// Replays change log entries onto a document that others share, without changing it: a
// checkpoint parsed once and kept in the DocumentCache, from which every read of a version
// after it starts (docs/design.md §9). Parsing a 1 MiB checkpoint costs more than replaying a
// thousand entries; copying it for each read would cost as much again. Instead, before an
// operation writes, the containers on its path that this replay has not copied yet are
// copied, each shallowly: the base stays as it was, and a replay costs what its entries touch.
//
// The result shares every untouched value with the base: it is for reading (serializing,
// `?path=`), never for changing. Serializing it reuses that sharing too (serialize()): only
// the copied containers are walked; a shared one is serialized once and, when large, its JSON
// kept for the next replay from the same base. For 1,000 increments on a 1 MiB document
// that leaves `{"counter":…,"items":` + the kept 1 MiB + `}` to join instead of a 1 MiB
// JSON.stringify per read.
import { applyContentOperation, type ContentOperation } from '../../shared/compound.js'
import { isContainer, type Json, type JsonContainer, type JsonObject } from '../../shared/json.js'
import { isCanonicalIndex } from '../../shared/path.js'

/**
 * JSON of shared containers (a base never changes, so neither does its JSON), held as long
 * as the container is: a base evicted from the cache takes its JSON with it. Only large
 * ones: a small container serializes faster than a lookup pays back. In memory the kept JSON
 * is about the base's own size again, within DocumentCache's pessimistic 4 bytes per byte.
 */
const sharedJson = new WeakMap<object, string>()
const KEPT_JSON_MIN_LENGTH = 4096

/** The JSON of a value no one changes any more (a cached base or a part of one). */
export function sharedJsonOf (value: JsonContainer): string {
  let json = sharedJson.get(value)
  if (json === undefined) {
    json = JSON.stringify(value)
    if (json.length >= KEPT_JSON_MIN_LENGTH) sharedJson.set(value, json)
  }
  return json
}

export class SharedBaseReplay {
  private doc: JsonObject
  /** Containers this replay created (its copies): safe to change. */
  private readonly own = new WeakSet<object>()
  /** The whole document is this replay's own: everything applies in place. */
  private owned = false

  constructor (base: JsonObject) {
    this.doc = base
  }

  /** Applies one committed operation (replayOperationOf), as applyContentOperation does. */
  apply (operation: ContentOperation): void {
    if (!this.owned) {
      switch (operation.op) {
        // Its value is the replayed entry's own, freshly parsed: the base is out of the picture.
        case 'update': this.owned = true; break
        // A batch or patch may move and copy values between paths: copy the whole document
        // once (rare: only replays that meet one pay it) rather than track each step.
        case 'batch':
        case 'patch':
          this.doc = structuredClone(this.doc)
          this.owned = true
          break
        default: this.copyPath(operation.path, operation.op === 'push' || operation.op === 'insert')
      }
    }
    this.doc = applyContentOperation(this.doc, operation)
  }

  /** The content after the operations applied so far. */
  get result (): JsonObject {
    return this.doc
  }

  /** JSON.stringify(result), the same text, walking only what this replay copied. */
  serialize (): string {
    // An update's value or a whole copy: nothing is shared any more.
    return this.owned ? JSON.stringify(this.doc) : this.json(this.doc)
  }

  private json (value: Json): string {
    if (value === null || typeof value !== 'object') return JSON.stringify(value)
    // Not copied by this replay: the base's (or an entry's value, which nothing changes either).
    if (!this.own.has(value)) return sharedJsonOf(value)
    let out: string
    if (Array.isArray(value)) {
      out = '['
      for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + this.json(value[i] as Json)
      return out + ']'
    }
    out = '{'
    // Object.keys lists members in the order JSON.stringify writes them.
    for (const key of Object.keys(value)) out += (out.length === 1 ? '' : ',') + JSON.stringify(key) + ':' + this.json(value[key] as Json)
    return out + '}'
  }

  /**
   * Makes every container an operation on `path` changes this replay's own: the root and
   * each container down to the target's parent, and the target itself for push and insert
   * (they change the array in place). Stops where the path stops existing: the operation
   * then creates what follows inside the last container, which is already a copy.
   */
  private copyPath (path: readonly string[], intoTarget: boolean): void {
    this.doc = this.writable(this.doc)
    let parent: JsonContainer = this.doc
    const depth = intoTarget ? path.length : path.length - 1
    for (let i = 0; i < depth; i++) {
      const key = path[i] as string
      let child: Json | undefined
      if (Array.isArray(parent)) {
        // A segment the operation will refuse: nothing more to copy.
        if (!isCanonicalIndex(key)) return
        child = parent[Number(key)]
        if (isContainer(child)) parent[Number(key)] = child = this.writable(child)
      } else {
        // Never assigned through: it would set a prototype (validateOperation refuses such paths anyway).
        if (key === '__proto__') return
        child = Object.hasOwn(parent, key) ? parent[key] : undefined
        if (isContainer(child)) parent[key] = child = this.writable(child)
      }
      if (!isContainer(child)) return
      parent = child
    }
  }

  private writable<T extends JsonContainer> (container: T): T {
    if (this.own.has(container)) return container
    const copy = (Array.isArray(container) ? container.slice() : { ...container }) as T
    this.own.add(copy)
    return copy
  }
}
