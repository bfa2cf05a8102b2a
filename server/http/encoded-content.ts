// The whole content as an HTTP body, compressed when the client accepts it (docs/api.md, Compressed reads).
// A version's JSON never changes, so each compressed form is made once per version, on
// libuv's thread pool (never on the event loop), and kept with the store's cached document
// (counted in CACHE_BYTES); every later read of that version, HEAD included, writes the kept
// buffer as it is. The ETag still names the version, whatever the encoding: `Vary:
// Accept-Encoding` tells caches the bytes differ.
import type { Request, Response } from 'express'
import Negotiator from 'negotiator'
import { promisify } from 'node:util'
import { brotliCompress, constants, gzip } from 'node:zlib'
import type { EncodedForms } from '../store/types.js'

/** Below this many bytes of JSON a body is sent as it is: compressing saves less than its headers and CPU cost. */
export const COMPRESS_MIN_BYTES = 1024

type Coding = 'br' | 'gzip'

const gzipAsync = promisify(gzip)
const brotliAsync = promisify(brotliCompress)

// Quality 5: for the benchmark's 1 MiB of records, ~3× smaller than gzip for about the time
// gzip's default level takes (~14 ms on a thread); 6 and above cost 2-3× more for little.
// gzip level 6 (zlib's default) for clients without br.
const COMPRESS: Record<Coding, (json: Buffer) => Promise<Buffer>> = {
  br: json => brotliAsync(json, { params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: json.length } }),
  gzip: json => gzipAsync(json)
}

// br before gzip when the client rates both the same (browsers send "gzip, deflate, br, zstd").
const AVAILABLE = ['br', 'gzip', 'identity'] as const
type Encodings = (available: readonly string[], options: { preferred: readonly string[] }) => string[]

/** The coding to answer `req` with, or null for the body as it is. */
export function negotiateCoding (req: Request): Coding | null {
  if (req.headers['accept-encoding'] === undefined) return null
  const negotiator = new Negotiator(req)
  // negotiator 1.x takes the server's order for ties; its @types predate the option.
  const [best] = (negotiator.encodings.bind(negotiator) as unknown as Encodings)(AVAILABLE, { preferred: AVAILABLE })
  return best === 'br' || best === 'gzip' ? best : null
}

/**
 * Answers with `json` (the whole content at one version; its ETag already set), compressed
 * as negotiated when it is large enough. `forms`: where this version's compressed forms are
 * kept, when the store keeps the document; without it the body goes out uncompressed rather
 * than compressed anew for every request.
 */
export async function sendContentJson (req: Request, res: Response, json: string, forms: EncodedForms | undefined): Promise<void> {
  res.setHeader('Content-Type', 'application/json; charset=utf-8')
  const coding = forms && json.length >= COMPRESS_MIN_BYTES ? negotiateCoding(req) : null
  if (!coding || !forms) {
    res.setHeader('Content-Length', Buffer.byteLength(json))
    res.end(json)
    return
  }
  let form = forms.get(coding)
  if (!form) {
    form = COMPRESS[coding](Buffer.from(json))
    forms.set(coding, form)
  }
  const body = await form
  res.setHeader('Content-Encoding', coding)
  res.setHeader('Content-Length', body.length)
  res.end(body)
}
