// The operations an API key can be narrowed to (docs/design.md §12): `ops` in POST /api/keys.
// The path operations only; update writes the whole content, which a narrowed key never may.
// Listed here rather than taken from operation-table.ts, which depends on schemas.ts, which
// validates `ops` with this list; operation-table.ts checks that the two lists agree.
export const NARROWABLE_OPERATIONS = ['increment', 'decrement', 'set', 'delete', 'push', 'insert'] as const
export type NarrowableOperation = typeof NARROWABLE_OPERATIONS[number]
