// The content limit counted while a batch or patch is applied (docs/design.md §13b, issue 26
// finding 1): the operation that would take the content past the limit is refused, before it
// runs, with CONTENT_TOO_LARGE naming it; the count agrees byte for byte with the size the
// stores measure, Buffer.byteLength(JSON.stringify(content)). Property-based where the claim
// is "for every document and operation"; seeds fixed as in test/fuzz/arbitraries.ts.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { applyBatch, type BatchOperation } from '../../shared/batch.js'
import { parseBatch } from '../../shared/batch-request.js'
import { applyContentOperation } from '../../shared/compound.js'
import { ContentBudget } from '../../shared/content-budget.js'
import { ContentdError } from '../../shared/errors.js'
import type { Json, JsonObject } from '../../shared/json.js'
import { jsonByteLength } from '../../shared/json-size.js'
import { applyPatch, parsePatch, pointerSegments, type PatchOperation } from '../../shared/json-patch.js'

const sizeOf = (value: Json): number => Buffer.byteLength(JSON.stringify(value))
const SEED = 26_01_2026

type Outcome = { ok: true, doc: JsonObject, bytes: number } | { ok: false, code: string, operation?: number }

function outcome (run: () => JsonObject, budget?: ContentBudget): Outcome {
  try {
    const doc = run()
    return { ok: true, doc, bytes: budget?.bytes ?? sizeOf(doc) }
  } catch (error) {
    if (!(error instanceof ContentdError)) throw error
    const body = error.toBody()
    return { ok: false, code: body.code, ...(body.operation !== undefined ? { operation: body.operation } : {}) }
  }
}

const patchWithin = (doc: JsonObject, operations: PatchOperation[], limit: number, start = sizeOf(doc)) => {
  const budget = new ContentBudget(limit, start)
  return outcome(() => applyPatch(doc, operations, budget), budget)
}
const batchWithin = (doc: JsonObject, operations: BatchOperation[], limit: number, start = sizeOf(doc)) => {
  const budget = new ContentBudget(limit, start)
  return outcome(() => applyBatch(doc, operations, budget), budget)
}

/** The value a JSON Pointer finds, or undefined. */
function valueAt (doc: Json, pointer: string): Json | undefined {
  let current: Json | undefined = doc
  for (const segment of pointerSegments(pointer)) {
    if (Array.isArray(current)) current = /^(0|[1-9][0-9]*)$/.test(segment) ? current[Number(segment)] : undefined
    else if (current !== null && typeof current === 'object') current = Object.prototype.hasOwnProperty.call(current, segment) ? current[segment] : undefined
    else return undefined
    if (current === undefined) return undefined
  }
  return current
}

interface Reference {
  /** The content's size after each operation, up to the first that fails. */
  sizes: number[]
  /** The bytes copied by `copy` operations up to and including each operation (the one that fails too). */
  copied: number[]
  failure?: { operation: number, code: string }
}

/** Each operation applied one by one without a limit: the reference. */
function oneByOne<T> (doc: JsonObject, operations: readonly T[], apply: (doc: JsonObject, operations: T[]) => JsonObject): Reference {
  const reference: Reference = { sizes: [], copied: [] }
  let current = doc
  let copied = 0
  for (let i = 0; i < operations.length; i++) {
    const operation = operations[i] as T & { op: string, from?: string }
    const source = operation.op === 'copy' ? valueAt(current, operation.from as string) : undefined
    copied += source === undefined ? 0 : sizeOf(source)
    reference.copied.push(copied)
    try {
      current = apply(current, [operation])
    } catch (error) {
      if (!(error instanceof ContentdError)) throw error
      reference.failure = { operation: i, code: error.code }
      return reference
    }
    reference.sizes.push(sizeOf(current))
  }
  return reference
}

// Characters that JSON escapes or writes in 2, 3 and 4 UTF-8 bytes, and lone surrogates.
const TRICKY = ['x', '"', '\\', '\n', '\u0001', '\u007f', 'é', '€', '\u2028', '😀', '\ud800', '\udc00']
/** JSON values over strings made of `chars`. */
const jsonOver = (chars: string[]): fc.Arbitrary<Json> => fc.letrec<{ value: Json }>(tie => ({
  value: fc.oneof({ depthSize: 'small' },
    fc.constant(null), fc.boolean(), fc.integer({ min: -1000, max: 1000 }), fc.constantFrom(0.5, -0, 1e21, 1.5e-7, -1e308),
    fc.array(fc.constantFrom(...chars), { maxLength: 6 }).map(parts => parts.join('')),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('a', 'b', 'é', 'k"', '€ 😀'), tie('value'), { maxKeys: 3 }).map(v => JSON.parse(JSON.stringify(v)) as Json))
})).value
const jsonish = jsonOver(TRICKY)
// Content as the API accepts it: lone surrogates are refused on the way in (shared/json.ts).
const writableJson = jsonOver(TRICKY.filter(c => !/^[\ud800-\udfff]$/.test(c)))

describe('jsonByteLength', () => {
  it('is Buffer.byteLength(JSON.stringify(value)) for any value, escapes and lone surrogates included', () => {
    fc.assert(fc.property(jsonish, value => {
      expect(jsonByteLength(value)).toBe(sizeOf(value))
    }), { seed: SEED, numRuns: 500 })
  })

  it('stops past its cap: exact at or under it, above it otherwise', () => {
    fc.assert(fc.property(jsonish, fc.integer({ min: 0, max: 80 }), (value, cap) => {
      const measured = jsonByteLength(value, cap)
      if (sizeOf(value) <= cap) expect(measured).toBe(sizeOf(value))
      else expect(measured).toBeGreaterThan(cap)
    }), { seed: SEED, numRuns: 500 })
  })
})

describe('batches and patches within CONTENT_LIMIT', () => {
  // A patch of copies, each copying the value the one before made: the content doubles per
  // operation, 2 KB of patch asking for gigabytes (the finding).
  const doubling = (copies: number): PatchOperation[] => Array.from({ length: copies }, () => ({ op: 'copy', from: '/d', path: '/d/-' }))
  const seed = (): JsonObject => ({ d: ['x'.repeat(64)] })

  it('refuses a patch of 24 doubling copies at the copy that crosses the limit, having built nothing larger', () => {
    const limit = 1024 * 1024
    const operations = doubling(24)
    expect(JSON.stringify(operations).length).toBeLessThan(2048)
    // Where the limit is crossed, from applying the copies one by one while they are small.
    let doc = seed()
    let crossing = -1
    for (let i = 0; i < operations.length; i++) {
      doc = applyPatch(doc, [operations[i] as PatchOperation])
      if (sizeOf(doc) > limit) { crossing = i; break }
    }
    expect(crossing).toBeGreaterThan(0)
    const original = seed()
    expect(patchWithin(original, operations, limit)).toEqual({ ok: false, code: 'CONTENT_TOO_LARGE', operation: crossing })
    expect(original).toEqual(seed())
  })

  it('refuses the 24 doubling copies at the default CONTENT_LIMIT (8 MiB) too, without running out of memory', () => {
    const limit = 8 * 1024 * 1024
    // Each copy appends d to itself: d's JSON becomes twice itself plus a comma.
    let arrayBytes = sizeOf(seed().d as Json)
    let crossing = 0
    while (arrayBytes * 2 + 1 + '{"d":}'.length <= limit) { arrayBytes = arrayBytes * 2 + 1; crossing++ }
    const budget = new ContentBudget(limit, sizeOf(seed()))
    expect(outcome(() => applyContentOperation(seed(), { op: 'patch', operations: doubling(24) }, budget)))
      .toEqual({ ok: false, code: 'CONTENT_TOO_LARGE', operation: crossing })
  })

  it('refuses doubling through nested objects (each copy goes inside the value it copies)', () => {
    const limit = 64 * 1024
    const operations: PatchOperation[] = Array.from({ length: 30 }, (_, i) => ({ op: 'copy', from: '/o', path: `/o/k${i}` }))
    const reference = oneByOne({ o: { v: 'y'.repeat(100) } }, operations.slice(0, 12), applyPatch)
    expect(reference.failure).toBeUndefined()
    const crossing = reference.sizes.findIndex(bytes => bytes > limit)
    expect(crossing).toBeGreaterThan(0)
    expect(patchWithin({ o: { v: 'y'.repeat(100) } }, operations, limit)).toEqual({ ok: false, code: 'CONTENT_TOO_LARGE', operation: crossing })
  })

  it('refuses a copy of a value larger than the limit before cloning it, and accepts one that replaces a larger value', () => {
    const big = 'z'.repeat(900)
    expect(patchWithin({ a: big, b: 1 }, [{ op: 'copy', from: '/a', path: '/b' }], 1000)).toEqual({ ok: false, code: 'CONTENT_TOO_LARGE', operation: 0 })
    // The copy replaces b, as large as a: the result is no larger than before.
    const doc = { a: big, b: 'w'.repeat(900) }
    expect(patchWithin(doc, [{ op: 'copy', from: '/a', path: '/b' }], sizeOf(doc))).toEqual({ ok: true, doc: { a: big, b: big }, bytes: sizeOf(doc) })
  })

  it('copies that each replace the last may together copy no more than the limit (bounded work, not only size)', () => {
    const doc = { d: 'c'.repeat(1000) }
    const limit = 4 * sizeOf(doc)
    // Each copy of d onto e replaces the one before: the content stays ~2 KB, but every copy clones 1 KB.
    const recopies: PatchOperation[] = Array.from({ length: 100 }, () => ({ op: 'copy', from: '/d', path: '/e' }))
    const copiesAllowed = Math.floor(limit / sizeOf(doc.d))
    expect(patchWithin(doc, recopies.slice(0, copiesAllowed), limit)).toMatchObject({ ok: true, doc: { d: doc.d, e: doc.d } })
    expect(patchWithin(doc, recopies, limit)).toEqual({ ok: false, code: 'CONTENT_TOO_LARGE', operation: copiesAllowed })
  })

  it('a move is charged for its keys, not its value: a large value moves within a full budget', () => {
    const doc = { a: 'm'.repeat(5000), b: 1 }
    const limit = sizeOf(doc)
    // /a to /c: same key length, the value moves; exactly the limit.
    expect(patchWithin(doc, [{ op: 'move', from: '/a', path: '/c' }], limit)).toEqual({ ok: true, doc: { b: 1, c: doc.a }, bytes: limit })
    // /a to /cc: one byte more than the limit allows.
    expect(patchWithin(doc, [{ op: 'move', from: '/a', path: '/cc' }], limit)).toEqual({ ok: false, code: 'CONTENT_TOO_LARGE', operation: 0 })
    expect(patchWithin(doc, [{ op: 'move', from: '/a', path: '/cc' }], limit + 1)).toMatchObject({ ok: true, bytes: limit + 1 })
    // A copy and then a move of the copy: the copy is what grows the content.
    const twice = sizeOf({ a: doc.a, b: 1, c: doc.a })
    expect(patchWithin(doc, [{ op: 'copy', from: '/a', path: '/t' }, { op: 'move', from: '/t', path: '/c' }], twice)).toMatchObject({ ok: true, bytes: twice })
    expect(patchWithin(doc, [{ op: 'copy', from: '/a', path: '/t' }, { op: 'move', from: '/t', path: '/c' }], twice - 1)).toEqual({ ok: false, code: 'CONTENT_TOO_LARGE', operation: 0 })
  })

  it('refuses a batch of sets at the set whose sum crosses the limit', () => {
    const chunk = 'q'.repeat(300)
    const operations = parseBatch({ operations: ['a', 'b', 'c', 'd', 'e'].map(path => ({ op: 'set', path, value: chunk })) }, 100)
    const { sizes } = oneByOne({}, operations, applyBatch)
    const limit = sizes[2] as number
    expect(batchWithin({}, operations, limit)).toEqual({ ok: false, code: 'CONTENT_TOO_LARGE', operation: 3 })
    expect(batchWithin({}, operations.slice(0, 3), limit)).toEqual({ ok: true, doc: { a: chunk, b: chunk, c: chunk }, bytes: limit })
  })

  it('accepts a result of exactly the limit and refuses one byte more, for every kind of operation', () => {
    const doc = { n: 9, s: 'é€', l: [1, 2], o: { 'k"': null } } as JsonObject
    const cases: Array<{ ops: unknown[], kind: 'batch' | 'patch' }> = [
      { kind: 'batch', ops: [{ op: 'increment', path: 'n' }] },
      { kind: 'batch', ops: [{ op: 'set', path: 'new.deep.key', value: '😀\n' }] },
      { kind: 'batch', ops: [{ op: 'push', path: 'l', value: { a: [true] } }, { op: 'insert', path: 'm', index: 0, value: 'x' }] },
      { kind: 'batch', ops: [{ op: 'delete', path: 's' }, { op: 'set', path: 'o.k"', value: '\u0001' }] },
      { kind: 'batch', ops: [{ op: 'set', path: 'l.2', value: -0.5 }, { op: 'decrement', path: 'l.0', value: 100 }] },
      { kind: 'patch', ops: [{ op: 'add', path: '/l/0', value: 'é' }, { op: 'remove', path: '/o' }, { op: 'replace', path: '/n', value: [] }] },
      { kind: 'patch', ops: [{ op: 'copy', from: '/o', path: '/o2' }, { op: 'move', from: '/l', path: '/o2/l' }] }
    ]
    for (const { kind, ops } of cases) {
      const operations = kind === 'batch' ? parseBatch({ operations: ops }, 100) : parsePatch(ops, 100)
      const run = (limit: number) => kind === 'batch'
        ? batchWithin(structuredClone(doc), operations as BatchOperation[], limit)
        : patchWithin(structuredClone(doc), operations as PatchOperation[], limit)
      const { sizes } = kind === 'batch' ? oneByOne(doc, operations as BatchOperation[], applyBatch) : oneByOne(doc, operations as PatchOperation[], applyPatch)
      // The largest the content gets, after the operation that first makes it so.
      const largest = Math.max(...sizes)
      const unlimited = run(Infinity)
      expect(unlimited, JSON.stringify(ops)).toMatchObject({ ok: true })
      // Accepted, with the size counted no lower than it is (an upper bound after a removal).
      const within = run(largest)
      expect(within, JSON.stringify(ops)).toMatchObject({ ok: true, doc: (unlimited as { doc: JsonObject }).doc })
      expect((within as { bytes: number }).bytes).toBeGreaterThanOrEqual(sizes[sizes.length - 1] as number)
      expect((within as { bytes: number }).bytes).toBeLessThanOrEqual(largest)
      expect(run(largest - 1), JSON.stringify(ops)).toEqual({ ok: false, code: 'CONTENT_TOO_LARGE', operation: sizes.indexOf(largest) })
    }
  })

  // The claim in general: with any limit, the first operation after which the content would
  // be larger than the limit is refused (naming it), and up to there the batch or patch
  // behaves exactly as without a limit. Starting from an upper bound of the size too.
  const KEYS = ['a', 'b', '0', 'é', 'k"']
  const document = fc.dictionary(fc.constantFrom(...KEYS), writableJson, { maxKeys: 4 }).map(doc => JSON.parse(JSON.stringify(doc)) as JsonObject)
  const dotPath = fc.array(fc.constantFrom(...KEYS, '1'), { minLength: 1, maxLength: 3 }).map(s => s.join('.'))
  const pointer = fc.array(fc.constantFrom(...KEYS, '1', '-'), { minLength: 1, maxLength: 3 }).map(s => '/' + s.map(p => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/'))
  const batchItem = fc.oneof(
    fc.record({ op: fc.constantFrom('increment', 'decrement'), path: dotPath, value: fc.integer({ min: -2000, max: 2000 }) }),
    fc.record({ op: fc.constantFrom('set', 'push'), path: dotPath, value: writableJson }),
    fc.record({ op: fc.constant('delete'), path: dotPath }),
    fc.record({ op: fc.constant('insert'), path: dotPath, value: writableJson, index: fc.integer({ min: 0, max: 2 }) })
  )
  const patchItem = fc.oneof(
    { weight: 2, arbitrary: fc.record({ op: fc.constantFrom('add', 'replace'), path: pointer, value: writableJson }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('remove'), path: pointer }) },
    { weight: 3, arbitrary: fc.record({ op: fc.constantFrom('move', 'copy'), from: pointer, path: pointer }) }
  )

  function checkAgainstReference<T> (doc: JsonObject, operations: T[], apply: (doc: JsonObject, operations: T[], budget?: ContentBudget) => JsonObject, pick: number, slack: number): void {
    const { sizes, copied, failure } = oneByOne(doc, operations, apply)
    const start = sizeOf(doc)
    // The limits worth trying: every size the content passes through, and one byte under it.
    const candidates = [start, ...sizes, ...copied].flatMap(bytes => [bytes, bytes - 1]).filter(limit => limit >= start)
    const limit = candidates[pick % candidates.length] as number
    const budget = new ContentBudget(limit, start + slack)
    const got = outcome(() => apply(structuredClone(doc), structuredClone(operations), budget), budget)
    // Refused at the first operation after which the content, or what the copies copied, is past the limit.
    const crossing = copied.findIndex((bytes, i) => bytes > limit || (sizes[i] ?? 0) > limit)
    if (crossing !== -1 && crossing === failure?.operation) {
      // That operation fails on its own too: either answer will do.
      expect([{ ok: false, code: 'CONTENT_TOO_LARGE', operation: crossing }, { ok: false, ...failure }]).toContainEqual(got)
    } else if (crossing !== -1) {
      expect(got).toEqual({ ok: false, code: 'CONTENT_TOO_LARGE', operation: crossing })
    } else if (failure) {
      // An operation fails on its own, with its own error, as without a limit.
      expect(got).toEqual({ ok: false, ...failure })
    } else {
      expect(got).toMatchObject({ ok: true })
      const result = got as { doc: JsonObject, bytes: number }
      expect(result.doc).toEqual(apply(structuredClone(doc), structuredClone(operations)))
      expect(result.bytes).toBeGreaterThanOrEqual(sizeOf(result.doc))
      expect(result.bytes).toBeLessThanOrEqual(limit)
    }
  }

  it('batches: refused exactly at the first operation past any limit, unchanged otherwise', () => {
    fc.assert(fc.property(document, fc.array(batchItem, { minLength: 1, maxLength: 6 }), fc.nat(), fc.constantFrom(0, 0, 3, 40), (doc, items, pick, slack) => {
      let operations: BatchOperation[]
      try { operations = parseBatch({ operations: items }, 100) } catch { return }
      checkAgainstReference(doc, operations, applyBatch, pick, slack)
    }), { seed: SEED, numRuns: 1500 })
  })

  it('patches: refused exactly at the first operation past any limit, unchanged otherwise', () => {
    fc.assert(fc.property(document, fc.array(patchItem, { minLength: 1, maxLength: 6 }), fc.nat(), fc.constantFrom(0, 0, 3, 40), (doc, items, pick, slack) => {
      let operations: PatchOperation[]
      try { operations = parsePatch(items, 100) } catch { return }
      checkAgainstReference(doc, operations, applyPatch, pick, slack)
    }), { seed: SEED, numRuns: 1500 })
  })
})
