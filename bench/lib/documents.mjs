// Realistic JSON content of a chosen size: an array of small records, the shape of a typical
// content document (posts, settings, inventory), not one giant string.

/** An object whose JSON is about `bytes` long (within one record), with `counter: 0`. */
export function documentOfSize (bytes) {
  const items = []
  const doc = { counter: 0, title: 'benchmark document', items }
  let size = JSON.stringify(doc).length
  for (let i = 0; size < bytes; i++) {
    const item = { id: i, name: `item ${i}`, tags: ['alpha', 'beta'], score: i * 7 % 101, active: i % 2 === 0 }
    size += JSON.stringify(item).length + 1
    items.push(item)
  }
  return doc
}

/** A value whose JSON is about `bytes` long. */
export function valueOfSize (bytes) {
  return { text: 'x'.repeat(Math.max(0, bytes - 11)) }
}
