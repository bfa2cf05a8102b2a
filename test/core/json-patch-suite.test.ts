// The public RFC 6902 test suite (the `json-patch-test-suite` npm package: tests.json and the
// RFC's own examples, spec_tests.json) run against the patch engine exactly as
// `PATCH …/content` runs it: parsePatch, then applyPatch (docs/design.md §10).
//
// Every test runs twice: as written (when its document is a JSON object, the only thing a
// project's content can be), and with its document moved one level down under "doc" (every
// pointer prefixed with "/doc"), so the tests on top-level arrays and scalars exercise the
// engine too. Where docs/design.md deliberately departs from RFC 6902, the test must be
// refused with a 400 instead: an empty patch, the root pointer "" (replace the content with
// an update), and keys that break §2's key rules (empty, ".", leading "$"). Tests the suite
// marks `disabled` are counted, not run.
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import { ContentdError } from '../../shared/errors.js'
import { isPlainObject, type Json, type JsonObject } from '../../shared/json.js'
import { jsonEqual } from '../../shared/json-equal.js'
import { applyPatch, parsePatch } from '../../shared/json-patch.js'

interface SuiteTest {
  comment?: string
  doc: Json
  patch: Array<Record<string, unknown>>
  expected?: Json
  error?: string
  disabled?: boolean
}

const require = createRequire(import.meta.url)
const SUITE: SuiteTest[] = [
  ...(require('json-patch-test-suite/tests.json') as SuiteTest[]),
  ...(require('json-patch-test-suite/spec_tests.json') as SuiteTest[])
]
const LIMIT = 100

// §2, restated here rather than imported, so the expectation does not come from the code under test.
const breaksKeyRules = (key: string) => key === '' || key.includes('.') || key.startsWith('$') || key === '__proto__'
const pointerKeys = (pointer: unknown) => typeof pointer === 'string' && pointer !== '' ? pointer.slice(1).split('/').map(t => t.replaceAll('~1', '/').replaceAll('~0', '~')) : []
function valueKeys (value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(valueKeys)
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([key, v]) => [key, ...valueKeys(v)])
  return []
}

/** Why docs/design.md refuses this test's patch where RFC 6902 would apply it, if it does. */
function designRefusal (test: SuiteTest): string | null {
  if (test.patch.length === 0) return 'an empty patch'
  if (test.patch.some(op => op.path === '' || op.from === '')) return 'the root pointer'
  const keys = test.patch.flatMap(op => [...pointerKeys(op.path), ...pointerKeys(op.from), ...valueKeys(op.value)])
  if (keys.some(breaksKeyRules)) return 'a key §2 does not allow'
  return null
}

function run (doc: JsonObject, patch: unknown): JsonObject {
  return applyPatch(doc, parsePatch(patch, LIMIT))
}

const wrapPointer = (pointer: unknown) => typeof pointer === 'string' ? '/doc' + pointer : pointer
function wrapped (test: SuiteTest): SuiteTest {
  const patch = test.patch.map(op => ({ ...op, path: wrapPointer(op.path), ...(op.from !== undefined ? { from: wrapPointer(op.from) } : {}) }))
  const result: SuiteTest = { ...test, doc: { doc: test.doc }, patch }
  if (test.expected !== undefined) result.expected = { doc: test.expected }
  return result
}

function check (test: SuiteTest, refusal: string | null): void {
  const doc = test.doc as JsonObject
  const before = structuredClone(doc)
  const failure = (() => { try { return { result: run(doc, structuredClone(test.patch)) } } catch (e) { return { error: e } } })()
  // The engine never changes the document it is given, whatever happens.
  expect(jsonEqual(doc, before)).toBe(true)
  if (refusal !== null) {
    expect(failure.error, refusal).toBeInstanceOf(ContentdError)
    expect((failure.error as ContentdError).status, refusal).toBe(400)
    return
  }
  if (test.error !== undefined) {
    expect(failure.error, test.error).toBeInstanceOf(ContentdError)
    expect([400, 409]).toContain((failure.error as ContentdError).status)
    return
  }
  if (failure.error) throw failure.error
  const expected = test.expected === undefined ? test.doc : test.expected
  expect(failure.result).toEqual(expected)
  expect(jsonEqual(failure.result as JsonObject, expected)).toBe(true)
}

const enabled = SUITE.filter(test => test.disabled !== true)
const asWritten = enabled.filter(test => isPlainObject(test.doc))
const name = (test: SuiteTest, i: number) => `${i}: ${test.comment ?? JSON.stringify(test.patch).slice(0, 80)}`

describe('json-patch-test-suite', () => {
  it('has the tests this file expects (the package did not shrink)', () => {
    expect(SUITE.length).toBe(95)
    expect(SUITE.length - enabled.length).toBe(4)
    // Of the enabled tests, these have a top-level array or scalar: they run wrapped only.
    expect(enabled.length - asWritten.length).toBe(29)
  })

  describe('as written (documents that are objects)', () => {
    asWritten.forEach((test, i) => {
      it(name(test, i), () => check(test, designRefusal(test)))
    })
  })

  describe('one level down, under "doc"', () => {
    enabled.forEach((test, i) => {
      const moved = wrapped(test)
      it(name(test, i), () => check(moved, designRefusal(moved)))
    })
  })

  it('applies most of the suite as RFC 6902 says, refusing only what docs/design.md refuses', () => {
    const refused = enabled.map(wrapped).filter(test => designRefusal(test) !== null)
    // Empty patches, and the tests with keys §2 does not allow ("/", "/foo/", …): 10 of 91.
    expect(refused.map(designRefusal).sort()).toEqual([...Array(4).fill('a key §2 does not allow'), ...Array(6).fill('an empty patch')].sort())
  })
})
