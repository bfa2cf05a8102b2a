// A live change reaches every SSE stream of its project as the same bytes (change-stream.ts
// liveFrameOf). Written with `res.write`, each stream would pay Node's HTTP framing for it:
// corking the socket with a nextTick to uncork, the chunk's size line, and a writev(2) of
// four pieces (size, CRLF, frame, CRLF). Framed once per change as one HTTP/1.1 chunk and
// written straight to each stream's socket, a delivery is one plain write(2) of a shared
// Buffer, as a Socket.IO broadcast is (server/realtime/write-batching.ts). The bytes the
// client receives are the same.
//
// It is taken only when it is byte for byte what `res.write(frame)` would send (Node's
// _http_outgoing.js write_ and _writeRaw): the head already sent, chunked transfer-encoding
// (so HTTP/1.1), nothing waiting in the response itself (which would go first), the socket
// the response's own and writable, the response not ended. Otherwise the stream writes with
// `res.write`. Two of those conditions are read from Node internals (`_headerSent`,
// `socket._httpMessage`); if they are not where they were, the shortcut is off,
// `contentd_sse_direct_write_bailouts_total` counts it and one line is logged
// (CONTRIBUTING.md "Library internals"; test/http/sse-direct-write.test.ts fails when the
// shortcut stops engaging).
import type { Socket } from 'node:net'
import type { Response } from 'express'
import type { Logger } from '../logger.js'
import { bailoutReporter } from '../observability/bailouts.js'
import type { Metrics } from '../observability/metrics.js'

const CRLF = Buffer.from('\r\n', 'latin1')

/** `<hex size>\r\n<frame>\r\n`: what `res.write(frame)` sends on a chunked response. */
export function chunkOf (frame: Buffer): Buffer {
  // An empty write sends nothing (Node skips the framing too): never an end-of-body chunk.
  if (frame.length === 0) return frame
  const size = Buffer.from(`${frame.length.toString(16)}\r\n`, 'latin1')
  return Buffer.concat([size, frame, CRLF], size.length + frame.length + CRLF.length)
}

/**
 * One frame shared by many streams: the SSE frame, and the same bytes as one HTTP/1.1 chunk,
 * joined once, by the first stream that writes it straight to its socket.
 */
export class SharedFrame {
  private chunked: Buffer | null = null
  constructor (readonly frame: Buffer) {}

  get chunk (): Buffer {
    this.chunked ??= chunkOf(this.frame)
    return this.chunked
  }
}

/** Which Node internal the shortcut could not find (so every stream writes with res.write). */
export type DirectWriteBailout = 'res._headerSent' | 'socket._httpMessage' | 'res.chunkedEncoding'

interface Internals {
  _headerSent?: unknown
  chunkedEncoding?: unknown
}

/**
 * The socket to write a pre-framed chunk to, when that is exactly what `res.write` would
 * send; null when the response must write it (told `bailOut` when a Node internal moved).
 */
export function directSocketOf (res: Response, bailOut: (reason: DirectWriteBailout) => void): Socket | null {
  const socket = res.socket
  // A response without its socket (a test's stand-in, or a request still queued behind
  // another on a pipelined connection) buffers in the response: res.write.
  if (!socket || res.writableEnded || res.destroyed || socket.destroyed || !socket.writable) return null
  const internals = res as unknown as Internals
  if (typeof internals.chunkedEncoding !== 'boolean') { bailOut('res.chunkedEncoding'); return null }
  // HTTP/1.0, or a response with a length: not chunked.
  if (!internals.chunkedEncoding) return null
  if (typeof internals._headerSent !== 'boolean') { bailOut('res._headerSent'); return null }
  if (!internals._headerSent) return null
  const owner = (socket as unknown as { _httpMessage?: unknown })._httpMessage
  if (owner === undefined) { bailOut('socket._httpMessage'); return null }
  if (owner !== res) return null
  // What the response holds besides its socket's buffer (res.writableLength counts both)
  // would go before the chunk: res.write flushes it first.
  if (res.writableLength !== socket.writableLength) return null
  return socket
}

/**
 * For a socket `directSocketOf` gave for this response: whether it still may be written to
 * directly. What it checked once stays true while the response owns a writable socket and
 * has not ended (the head stays sent, the encoding chunked, and the response buffers
 * nothing of its own while its socket is its and writable: Node's _writeRaw writes straight
 * through then). Checked per write instead of the whole of `directSocketOf`: on a fan-out
 * to 1,000 streams, reading the response's own state for each was a tenth of the SSE
 * side's CPU (BENCHMARKS.md).
 */
export function stillDirect (res: Response, socket: Socket): boolean {
  return socket.writable && (socket as unknown as { _httpMessage?: unknown })._httpMessage === res && !res.writableEnded
}

const bailoutsLogged = new Set<string>()

/** Counted every time, logged once per reason per process (as write-batching.ts does). */
export function noteDirectBailout (reason: DirectWriteBailout, logger: Pick<Logger, 'warn'>, metrics: Metrics | undefined): void {
  bailoutReporter(metrics?.sseDirectWriteBailouts, logger, 'SSE direct writes are off: a Node internal they rely on moved (server/http/sse-chunk.ts)', bailoutsLogged)(reason)
}
