// sorted-btree is CommonJS with `exports.default`: under Node's ESM the default import is the
// module object, so the class is reached through it (one place, typed once).
import sortedBtree from 'sorted-btree'

type BTreeClass = typeof sortedBtree extends { default: infer C } ? C : typeof sortedBtree
const moduleObject = sortedBtree as unknown as { default?: BTreeClass }
export const BTree: BTreeClass = moduleObject.default ?? (sortedBtree as unknown as BTreeClass)
