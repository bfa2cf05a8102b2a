// V8's heap growth, tuned for a cache-holding server. After each full collection V8 lets the
// old generation grow to up to 4× what survived before collecting again; the document cache
// turns over a lot of long-lived objects (every evicted document was promoted), so with the
// defaults the garbage waiting for that next collection dwarfs the cache itself: a server
// with a 32 MiB cache budget and 10,000 touched projects sat at 273-297 MiB RSS, of which
// ~45 MiB live heap. Capping the growth at 1.5× the surviving heap brought the same run to
// ~190 MiB, and later, as the server grew, to 196-206 MiB against round two's 200 MiB goal;
// 1.3× brings it to 188-191 MiB (1.2×: 186 MiB). The full collections this adds did not show
// in the increment benchmark (interleaved: 0.61× and 0.60× of the ceiling at 1.3×, 0.60× and
// 0.59× at 1.5×; BENCHMARKS.md). Imported first by the server's entry point only: tests and
// tools that embed the app keep V8's defaults.
import { setFlagsFromString } from 'node:v8'

setFlagsFromString('--heap-growing-percent=30')
