// V8's young generation, held at 16 MiB (two semi-spaces of 8 MiB) instead of V8's 32 MiB.
// The memory scenario (10,000 projects of 10 KiB touched) ended with the young generation at
// 32 MiB of RSS of which 4-7 MiB held objects (BENCHMARKS.md): a server that once promoted a
// lot (filling its document cache) keeps both semi-spaces at their maximum for good.
// `--max-semi-space-size` would say so, but V8 reads it only when the process starts, from
// the command line, and not every way of starting the server passes flags. The growth
// factor, though, V8 reads each time it grows the space: 2 (its default) while the space is
// below the target, 1 (no growth) once it is there, checked after every collection. V8 still
// shrinks the space when allocation is slow, and the factor goes back to 2 below the target.
// Growing needs more bytes to survive since the last growth than the space holds, which takes
// many scavenges in a server, so the check (after each one) comes before the next growth.
// Imported by the server's entry point only, like heap-growth.ts: tests and tools that embed
// the app keep V8's defaults. A test (young-generation.test.ts) fails if the hold stops engaging.
import { PerformanceObserver } from 'node:perf_hooks'
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8'

/** Both semi-spaces together, as V8's `new_space` statistics count them. */
export const YOUNG_GENERATION_BYTES = 16 * 1024 * 1024

let growing: boolean | null = null

function steer (): void {
  const newSpace = getHeapSpaceStatistics().find(space => space.space_name === 'new_space')
  if (newSpace === undefined) return
  const grow = newSpace.space_size < YOUNG_GENERATION_BYTES
  if (grow === growing) return
  growing = grow
  setFlagsFromString(`--semi-space-growth-factor=${grow ? 2 : 1}`)
}

steer()
new PerformanceObserver(steer).observe({ entryTypes: ['gc'] })
