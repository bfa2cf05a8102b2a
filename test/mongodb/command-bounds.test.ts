// Every command the MongoDB store builds for a content write stays small and shallow, for the
// longest legal paths (issue 28, A1 and A2): the old guard expressions doubled in size with
// every index-like segment (a 32-segment path of "0"s ran the process out of memory) and
// nested about six levels per segment (207 levels for 32 segments, past mongod's 200). Now a
// command is the filter on the version plus the native update: its size is the written
// value's plus a constant and the path, its depth the value's plus a constant.
import { BSON, type Document } from 'mongodb'
import { describe, expect, it } from 'vitest'
import type { ContentOperation } from '../../shared/compound.js'
import type { Json, JsonObject } from '../../shared/json.js'
import { MAX_VALUE_DEPTH } from '../../shared/json.js'
import { MAX_PATH_LENGTH, MAX_PATH_SEGMENTS } from '../../shared/path.js'
import { changePartsOf } from '../../server/store/change-entry.js'
import { WRITE_RESULT_PROJECTION } from '../../server/store/mongodb/history.js'
import { prepareCommit } from '../../server/store/mongodb/write-path.js'

/** mongod refuses commands nested deeper than this (its maxBSONDepth). */
const MONGOD_COMMAND_DEPTH = 200
/**
 * What a command adds to the depth of the value it writes (findAndModify → update → $set →
 * value), or the depth of its fixed parts (the result projection), whichever is deeper.
 */
const COMMAND_DEPTH_OVERHEAD = 12
/** What a command adds in bytes besides the value and the path. */
const COMMAND_BYTES_OVERHEAD = 2048

/** Containers nested in a BSON document (a document is 1). */
function depthOf (value: unknown): number {
  if (value === null || typeof value !== 'object' || '_bsontype' in value) return 0
  const children = Array.isArray(value) ? value : Object.values(value)
  return 1 + Math.max(0, ...children.map(depthOf))
}

/** The findAndModify command the driver sends for the write (without the session's fields). */
function commandOf (content: JsonObject, op: ContentOperation): Document {
  const write = prepareCommit('p1', { version: 4, content: structuredClone(content) }, { applied: op, parts: changePartsOf(op), value: 'value' in op ? op.value : undefined },
    { type: 'user', name: '@tester' }, 64 * 1024 * 1024, null)
  return { findAndModify: 'projects', query: write.filter, update: write.update, new: true, fields: WRITE_RESULT_PROJECTION }
}

function nested (depth: number, leaf: Json = 1): Json {
  let value = leaf
  for (let i = 0; i < depth; i++) value = [value]
  return value
}

const zeros = Array.from({ length: MAX_PATH_SEGMENTS }, () => '0')
const longKeys = Array.from({ length: MAX_PATH_SEGMENTS }, (_, i) => String.fromCharCode(97 + (i % 26)).repeat(31))
const wideKeys = Array.from({ length: MAX_PATH_SEGMENTS }, (_, i) => 'é'.repeat(30) + String(i % 10))
// Containers along the path: arrays all the way down (the guards' worst case), or nothing yet.
const arraysAlong: JsonObject = { 0: nested(MAX_PATH_SEGMENTS - 2, 1) as Json[] }
const deepestValue = nested(MAX_VALUE_DEPTH)

const PATHS: Array<[string, string[], JsonObject]> = [
  ['32 "0" segments through nested arrays', zeros, arraysAlong],
  ['32 "0" segments where nothing exists', zeros, {}],
  ['32 segments of 31 characters (1023 characters)', longKeys, {}],
  ['32 segments of 31 two-byte characters', wideKeys, {}]
]

describe('content write commands are bounded for the longest legal paths', () => {
  it('the paths are the longest the rules allow', () => {
    expect(longKeys.join('.').length).toBe(MAX_PATH_LENGTH - 1)
    expect(wideKeys.join('.').length).toBe(MAX_PATH_LENGTH - 1)
  })

  for (const [name, path, content] of PATHS) {
    const ops: ContentOperation[] = [
      { op: 'increment', path, value: 1 },
      { op: 'decrement', path, value: 2 },
      { op: 'set', path, value: deepestValue },
      { op: 'push', path: path.slice(0, -1), value: deepestValue },
      { op: 'insert', path: path.slice(0, -1), value: deepestValue, index: 0 },
      { op: 'delete', path },
      { op: 'delete', path: path.slice(0, -1) }
    ]
    it.each(ops.map(op => [op.op, op] as const))(`${name}: %s`, (_kind, op) => {
      // Through nested arrays an increment meets an array and push/insert a number: refused
      // by the core before any command exists; those cases send nothing at all.
      let command: Document
      try {
        command = commandOf(content, op)
      } catch {
        return
      }
      const value = 'value' in op ? op.value : null
      const pathBytes = Buffer.byteLength(path.join('.'))
      expect(BSON.calculateObjectSize(command)).toBeLessThanOrEqual(BSON.calculateObjectSize({ value }) + 2 * pathBytes + COMMAND_BYTES_OVERHEAD)
      expect(depthOf(command)).toBeLessThanOrEqual(depthOf({ value }) + COMMAND_DEPTH_OVERHEAD)
      expect(depthOf(command)).toBeLessThan(MONGOD_COMMAND_DEPTH)
    })
  }

  it('every operation on a 32-segment path of "0"s through arrays is built (not refused) where the core accepts it', () => {
    // The exact case that ended a node out of memory: an increment at the deepest element.
    const content: JsonObject = { 0: nested(MAX_PATH_SEGMENTS - 1, 5) as Json[] }
    const command = commandOf(content, { op: 'increment', path: zeros, value: 1 })
    expect(Object.keys(command.update.$inc as object)).toContain(['content', ...zeros].join('.'))
    expect(BSON.calculateObjectSize(command)).toBeLessThan(COMMAND_BYTES_OVERHEAD + 200)
    expect(depthOf(command)).toBeLessThanOrEqual(COMMAND_DEPTH_OVERHEAD)
  })
})
