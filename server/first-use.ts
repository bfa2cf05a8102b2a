// Libraries only some deployments use are loaded when first needed, not at start, so a node
// that never needs them keeps them out of its heap (BENCHMARKS.md, the memory scenario;
// test/integration/lazy-modules.test.ts): CEL (rules/expression.ts), Ajv (schema/compile.ts),
// jose (services/jose.ts). The Redis client is imported where its one connection is made.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)

/** `load` run at the first call only; every call answers what it made (a promise, for an import). */
export function onFirstUse<T> (load: () => T): () => T {
  let loaded: { value: T } | undefined
  return () => (loaded ??= { value: load() }).value
}

/** A package's CommonJS build, synchronously: a caller that compiles (CEL, Ajv) stays synchronous. */
export function requireCommonJs<T> (specifier: string): T {
  return require(specifier) as T
}
