// Deep equality of JSON values, as RFC 6902's `test` defines it and as the batch's `test`
// uses it (docs/design.md §10): same type; numbers by value; arrays element by element in
// order; objects with the same members whatever their order.
import { isPlainObject, type Json } from './json.js'

export function jsonEqual (a: Json, b: Json): boolean {
  if (a === b) return true
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i] as Json))
  }
  if (!isPlainObject(a) || !isPlainObject(b)) return false
  const keys = Object.keys(a)
  if (keys.length !== Object.keys(b).length) return false
  return keys.every(key => Object.prototype.hasOwnProperty.call(b, key) && jsonEqual(a[key] as Json, b[key] as Json))
}
