// Aggregation expressions that walk a content path EXACTLY as shared/operations.ts walks it.
//
// Why not query dot-notation (`{'content.a.0': …}`)? Queries traverse arrays implicitly
// ('a.b' matches b inside every element of a; '$type: number' matches an array holding a
// number), and aggregation field paths ('$content.a.0') read field "0" of each element rather
// than element 0. Neither says "the value at this path". These builders step one level at a
// time: element i of an array ($arrayElemAt), field s of an object ($getField), nothing
// (missing) otherwise, so a guard can state the shared rules precisely inside one `$expr`.
//
// Each level binds its container to a variable ($let), which keeps the expression linear in
// the path length (at most 32 segments) instead of repeating the walk at every level.
import { isCanonicalIndex } from '../../../shared/path.js'

export type Expression = unknown

/** Array positions beyond this are not representable in $arrayElemAt and cannot exist (16 MiB documents). */
export const MAX_ARRAY_POSITION = 2_147_483_647

/** What the operation needs of its target: `check` when it exists, `whenMissing` when it does not. */
export interface TargetRule {
  check: ((target: string) => Expression) | true
  whenMissing: boolean
}

/**
 * The rules of shared/operations.ts walk(): `write` (set, increment, decrement, push, insert)
 * refuses a path through a scalar, a non-canonical index into an array and an index past an
 * array's end; `delete` refuses the first two and treats past-the-end as missing.
 */
export type WalkMode = 'write' | 'delete'

const variable = (depth: number): string => `c${depth}`
const isType = (expression: Expression, type: string): Expression => ({ $eq: [{ $type: expression }, type] })
const missing = '$$REMOVE'

/** The array position a segment addresses, or null when it cannot address one. */
export function arrayPosition (segment: string): number | null {
  if (!isCanonicalIndex(segment)) return null
  const position = Number(segment)
  return position <= MAX_ARRAY_POSITION ? position : null
}

/** The field `segment` of `container` when it is an object, else missing. */
export function fieldOf (container: string, segment: string): Expression {
  return { $cond: [isType(container, 'object'), { $getField: { field: segment, input: container } }, missing] }
}

/** The element at `position` of an array container (missing past its end). */
export function elementOf (container: string, position: number): Expression {
  return { $arrayElemAt: [container, position] }
}

/**
 * True when walking `path` under `$content` obeys `mode` and the target obeys `target`.
 * Evaluates to false exactly where the shared walk would throw (or the target rule fails).
 */
export function pathGuard (path: readonly string[], mode: WalkMode, target: TargetRule): Expression {
  return level(path, 0, '$content', mode, target)
}

function level (path: readonly string[], depth: number, container: Expression, mode: WalkMode, target: TargetRule): Expression {
  const here = `$$${variable(depth)}`
  const segment = path[depth] as string
  const last = depth === path.length - 1
  const next = (child: Expression): Expression => last ? targetCheck(child, target, depth) : level(path, depth + 1, child, mode, target)

  const position = arrayPosition(segment)
  let inArray: Expression
  if (!isCanonicalIndex(segment)) {
    inArray = false // INVALID_ARRAY_INDEX
  } else if (mode === 'write') {
    // index <= length: replace or append; past the end is INDEX_OUT_OF_RANGE.
    inArray = position === null ? false : { $cond: [{ $lte: [position, { $size: here }] }, next(elementOf(here, position)), false] }
  } else {
    // delete: past the end is simply missing.
    inArray = position === null ? true : { $cond: [{ $lt: [position, { $size: here }] }, next(elementOf(here, position)), true] }
  }
  return {
    $let: {
      vars: { [variable(depth)]: container },
      in: {
        $switch: {
          branches: [
            { case: isType(here, 'object'), then: next({ $getField: { field: segment, input: here } }) },
            { case: { $isArray: here }, then: inArray },
            // Nothing here, so nothing below: the target is missing and would be created.
            { case: isType(here, 'missing'), then: mode === 'delete' || target.whenMissing }
          ],
          // A string, number, boolean or null in the middle of the path: PATH_CONFLICT.
          default: false
        }
      }
    }
  }
}

function targetCheck (value: Expression, target: TargetRule, depth: number): Expression {
  if (target.check === true) return true
  const name = `t${depth}`
  return {
    $let: {
      vars: { [name]: value },
      in: { $cond: [isType(`$$${name}`, 'missing'), target.whenMissing, target.check(`$$${name}`)] }
    }
  }
}

/**
 * The new content after deleting `path`, for a path whose last segment is a canonical
 * index: at run time that segment may name an array element (removed, later elements
 * shift down, unlike $unset which leaves null) or an object key (removed with $unsetField).
 * Containers along the path are rebuilt; everything else is left exactly as it was.
 */
export function contentWithout (path: readonly string[]): Expression {
  return rebuild(path, 0, '$content')
}

function rebuild (path: readonly string[], depth: number, container: Expression): Expression {
  const here = `$$${variable(depth)}`
  const segment = path[depth] as string
  const last = depth === path.length - 1
  const position = arrayPosition(segment)

  const inObject = last
    ? { $unsetField: { field: segment, input: here } }
    : { $setField: { field: segment, input: here, value: rebuild(path, depth + 1, { $getField: { field: segment, input: here } }) } }
  let inArray: Expression = here
  if (position !== null) {
    const changed = last ? removeAt(here, position) : replaceAt(here, position, rebuild(path, depth + 1, elementOf(here, position)))
    inArray = { $cond: [{ $lt: [position, { $size: here }] }, changed, here] }
  }
  return {
    $let: {
      vars: { [variable(depth)]: container },
      in: {
        $switch: {
          branches: [
            { case: isType(here, 'object'), then: inObject },
            { case: { $isArray: here }, then: inArray }
          ],
          // Missing (nothing to delete) or a scalar (the guard refuses it): unchanged.
          default: here
        }
      }
    }
  }
}

/** Elements after `position`; only used when position < length, so the count is >= 1. */
const after = (array: string, position: number): Expression => ({ $slice: [array, position + 1, { $size: array }] })
const before = (array: string, position: number): Expression[] => position === 0 ? [] : [{ $slice: [array, position] }]

function removeAt (array: string, position: number): Expression {
  return position === 0 ? after(array, 0) : { $concatArrays: [...before(array, position), after(array, position)] }
}

function replaceAt (array: string, position: number, value: Expression): Expression {
  return { $concatArrays: [...before(array, position), [value], after(array, position)] }
}
