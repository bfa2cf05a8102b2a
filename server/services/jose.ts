// jose (JWT and JWK), loaded on first use: only projects that trust an app's sign-in
// (docs/design.md §17) verify app tokens or import keys, and a node without any keeps the
// library out of its heap (~0.6 MiB; BENCHMARKS.md, the memory scenario). Both callers
// are async already, so the one-time import costs no change of shape.
import { onFirstUse } from '../first-use.js'

export type Jose = typeof import('jose')

export const loadJose: () => Promise<Jose> = onFirstUse(async () => await import('jose'))
