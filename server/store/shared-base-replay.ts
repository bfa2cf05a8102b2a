// Replays change log entries onto a past content that others share, without changing it: a
// checkpoint kept in the DocumentCache, from which every read of a version after it starts
// (docs/design.md §9). A 1 MiB checkpoint costs more to parse and serialize again than a
// thousand entries cost to replay, so a base is kept as the text it is stored as, and parsed
// only where entries reach:
// - the root's members are located in the text (json-members.ts) only as far as the first
//   replay that needs each one, which also parses it; both stay with the base (PastContent);
// - before an operation writes, the containers on its path that this replay has not copied
//   yet are copied, each shallowly: the base stays as it was, and a replay costs what its
//   entries touch;
// - serializing copies the untouched members' text as is (the ones never located in one
//   slice) and walks only what the replay copied. For 1,000 increments of a counter in a
//   1 MiB document, a read parses and writes `"counter":…` and joins the rest of the stored
//   text to it. Entries that reach into a large member (one record of a 1 MiB array) still
//   parse that member once per cached checkpoint and serialize it per read.
//
// The result shares every untouched value with the base: it is for reading (serializing,
// `?path=`), never for changing.
import { applyContentOperation, type ContentOperation } from '../../shared/compound.js'
import { isContainer, type Json, type JsonContainer, type JsonObject } from '../../shared/json.js'
import { isCanonicalIndex } from '../../shared/path.js'
import { MemberScanner, type MemberSpan } from './json-members.js'

/**
 * JSON of shared containers (a base never changes, so neither does its JSON), held as long
 * as the container is: a base evicted from the cache takes its JSON with it. Only large
 * ones: a small container serializes faster than a lookup pays back.
 */
const sharedJson = new WeakMap<object, string>()
const KEPT_JSON_MIN_LENGTH = 4096

/** The JSON of a value no one changes any more (a part of a cached base). */
function sharedJsonOf (value: JsonContainer): string {
  let json = sharedJson.get(value)
  if (json === undefined) {
    json = JSON.stringify(value)
    if (json.length >= KEPT_JSON_MIN_LENGTH) sharedJson.set(value, json)
  }
  return json
}

// eslint-disable-next-line no-control-regex -- the Latin-1 range starts at U+0000
const WIDE_CHARACTER = /[^\u0000-\u00ff]/

/**
 * A committed past content, as its stored JSON text (an object's), its root's members
 * located as replays need them and parsed on first need. Never changed once parsed:
 * replays copy what they change.
 */
export class PastContent {
  private readonly scanner: MemberScanner
  /** The members located so far, in order, and by key (stored JSON never repeats a key). */
  readonly found: MemberSpan[] = []
  private readonly byKey = new Map<string, MemberSpan>()
  private readonly parsed = new Map<string, Json>()

  /** Memory its text takes: V8 keeps a string at 1 byte a character when every one fits in Latin-1, else at 2. */
  readonly textBytes: number
  /** Text length of the members parsed so far: what the DocumentCache charges as parsed values. */
  parsedTextLength = 0

  constructor (readonly json: string) {
    this.scanner = new MemberScanner(json)
    this.textBytes = json.length * (WIDE_CHARACTER.test(json) ? 2 : 1)
  }

  /** Locates one more member; false once all are. */
  scanOne (): boolean {
    const span = this.scanner.scan()
    if (!span) return false
    this.found.push(span)
    this.byKey.set(span.key, span)
    return true
  }

  /** The text of the members from the `index`-th found on (later ones not located yet), without the closing brace. */
  textFrom (index: number): string {
    const start = index < this.found.length ? (this.found[index] as MemberSpan).keyStart : this.scanner.position
    return start === -1 ? '' : this.json.slice(start, this.scanner.close)
  }

  /** A root member's value, parsed once and shared. */
  valueOf (span: MemberSpan): Json {
    let value = this.parsed.get(span.key)
    if (value === undefined) {
      value = JSON.parse(this.json.slice(span.start, span.end)) as Json
      this.parsed.set(span.key, value)
      this.parsedTextLength += span.end - span.start
    }
    return value
  }

  /** The stored text of the member `key` when `value` is its shared parsed value; undefined otherwise. */
  textIfShared (key: string, value: Json): string | undefined {
    const span = this.byKey.get(key)
    return span && this.parsed.get(key) === value ? this.json.slice(span.start, span.end) : undefined
  }
}

/** A root member no operation has reached yet: its value is still only text in the base. */
class Unparsed {
  constructor (readonly span: MemberSpan) {}
}

export class SharedBaseReplay {
  private doc: JsonObject
  /** Containers this replay created (its root and its copies): safe to change. */
  private readonly own = new WeakSet<object>()
  /** The whole document is this replay's own: everything applies in place. */
  private owned = false

  /** How many of the base's members (base.found) the root holds; the rest is still text. */
  private placed = 0

  constructor (private readonly base: PastContent) {
    this.doc = {}
    this.own.add(this.doc)
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
          this.doc = structuredClone(this.result)
          this.owned = true
          break
        default:
          this.parseMember(operation.path[0] as string)
          this.copyPath(operation.path, operation.op === 'push' || operation.op === 'insert')
      }
    }
    this.doc = applyContentOperation(this.doc, operation)
  }

  /** The content after the operations applied so far (every member parsed). */
  get result (): JsonObject {
    if (!this.owned) {
      this.placeAll()
      for (const key of Object.keys(this.doc)) this.parseMember(key)
    }
    return this.doc
  }

  /** JSON.stringify(result), the same text, walking only what this replay copied. */
  serialize (): string {
    // An update's value or a whole copy: nothing is shared any more.
    if (this.owned) return JSON.stringify(this.doc)
    const root = this.doc as Record<string, Json | Unparsed>
    let out = '{'
    // Object.keys lists members in the order JSON.stringify writes them: the stored text's
    // order (members are placed in it, and a new one only once all are placed).
    for (const key of Object.keys(root)) {
      const value = root[key] as Json | Unparsed
      out += (out.length === 1 ? '' : ',') + JSON.stringify(key) + ':'
      if (value instanceof Unparsed) out += this.base.json.slice(value.span.start, value.span.end)
      else out += this.base.textIfShared(key, value) ?? this.json(value)
    }
    // The members no operation looked for, as stored.
    const rest = this.base.textFrom(this.placed)
    if (rest !== '') out += (out.length === 1 ? '' : ',') + rest
    return out + '}'
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
    for (const key of Object.keys(value)) out += (out.length === 1 ? '' : ',') + JSON.stringify(key) + ':' + this.json(value[key] as Json)
    return out + '}'
  }

  /**
   * Places the base's members into the root, in order, until `key` is among them (or all
   * are): only then can an operation tell whether the member exists, and a member it creates
   * comes after all of them. Then replaces the member's placeholder by its parsed value.
   */
  private parseMember (key: string): void {
    while (!Object.hasOwn(this.doc, key) && this.placeNext());
    if (!Object.hasOwn(this.doc, key)) return
    const value = (this.doc as Record<string, Json | Unparsed>)[key]
    if (value instanceof Unparsed) Object.defineProperty(this.doc, key, { value: this.base.valueOf(value.span), writable: true, enumerable: true, configurable: true })
  }

  /** Places one more of the base's members (locating it first if needed); false when none is left. */
  private placeNext (): boolean {
    if (this.placed === this.base.found.length && !this.base.scanOne()) return false
    const span = this.base.found[this.placed++] as MemberSpan
    // Defined, not assigned: a member named "__proto__" must stay a member.
    Object.defineProperty(this.doc, span.key, { value: new Unparsed(span), writable: true, enumerable: true, configurable: true })
    return true
  }

  private placeAll (): void {
    while (this.placeNext());
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
