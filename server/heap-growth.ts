// V8's heap growth, tuned for a cache-holding server. After each full collection V8 lets the
// old generation grow to up to 4× what survived before collecting again; the document cache
// turns over a lot of long-lived objects (every evicted document was promoted), so with the
// defaults the garbage waiting for that next collection dwarfs the cache itself: a server
// with a 32 MiB cache budget and 10,000 touched projects sat at 273-297 MiB RSS, of which
// ~45 MiB live heap. Capping the growth at 1.5× the surviving heap brought the same run to
// ~190 MiB, for more frequent (but smaller) full collections; the write path promotes little,
// so the increment benchmark does not see them. Imported first by the server's entry point
// only: tests and tools that embed the app keep V8's defaults.
import { setFlagsFromString } from 'node:v8'

setFlagsFromString('--heap-growing-percent=50')
