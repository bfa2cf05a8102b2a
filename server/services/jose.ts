// jose (JWT and JWK), loaded on first use: only projects that trust an app's sign-in
// (docs/design.md §17) verify app tokens or import keys, and a node without any keeps the
// library out of its heap (~0.6 MiB; BENCHMARKS.md, the memory scenario). Both callers
// are async already, so the one-time import costs no change of shape.
export type Jose = typeof import('jose')

let loading: Promise<Jose> | undefined

export function loadJose (): Promise<Jose> {
  loading ??= import('jose')
  return loading
}
