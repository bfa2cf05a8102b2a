// A WebSocket client written on raw TCP, for tests that need what no well-behaved client
// sends: several Engine.IO/Socket.IO packets in ONE TCP write, malformed or oversize frames,
// a chosen Origin or source address, or a peer that stops reading. Just enough of RFC 6455:
// masked client frames, unmasked server frames, ping/pong.
import { randomBytes } from 'node:crypto'
import { connect, type Socket } from 'node:net'

export interface RawOptions {
  origin?: string
  /** Source address (127.0.0.2, …) to play another client IP. */
  localAddress?: string
  /** Defaults to the Engine.IO websocket handshake path. */
  path?: string
}

/** The server refused the upgrade: its HTTP status, headers and body. */
export interface RawRefusal {
  status: number
  headers: Record<string, string>
  body: string
}

const ENGINE_PATH = '/socket.io/?EIO=4&transport=websocket'

/** One client→server WebSocket frame (clients must mask). */
export function frame (payload: string | Buffer, opcode = 0x1): Buffer {
  const data = typeof payload === 'string' ? Buffer.from(payload) : payload
  const length = data.length
  const header = length < 126 ? Buffer.from([0x80 | opcode, 0x80 | length])
    : length < 65536 ? Buffer.from([0x80 | opcode, 0x80 | 126, length >> 8, length & 0xff])
      : Buffer.concat([Buffer.from([0x80 | opcode, 0x80 | 127]), (() => { const b = Buffer.alloc(8); b.writeBigUInt64BE(BigInt(length)); return b })()])
  const mask = randomBytes(4)
  const masked = Buffer.alloc(length)
  for (let i = 0; i < length; i++) masked[i] = (data[i] as number) ^ (mask[i % 4] as number)
  return Buffer.concat([header, mask, masked])
}

export class RawWebSocket {
  /** Text messages received, in order. */
  readonly messages: string[] = []
  /** Resolves when the TCP connection is gone. */
  readonly closed: Promise<void>
  private buffer = Buffer.alloc(0)
  private waiters: Array<() => void> = []
  private ended = false

  private constructor (private readonly socket: Socket, rest: Buffer) {
    this.closed = new Promise(resolve => socket.once('close', () => { this.ended = true; this.wake(); resolve() }))
    socket.on('data', (chunk: Buffer) => this.receive(chunk))
    socket.on('error', () => {})
    if (rest.length) this.receive(rest)
  }

  /** Upgrades to a WebSocket; resolves with the socket, or with the refusal. */
  static open (port: number, options: RawOptions = {}): Promise<RawWebSocket | RawRefusal> {
    return new Promise((resolve, reject) => {
      const socket = connect({ port, host: '127.0.0.1', ...(options.localAddress ? { localAddress: options.localAddress } : {}) })
      let head = Buffer.alloc(0)
      const onData = (chunk: Buffer) => {
        head = Buffer.concat([head, chunk])
        const end = head.indexOf('\r\n\r\n')
        if (end < 0) return
        const lines = head.subarray(0, end).toString('latin1').split('\r\n')
        const status = Number(lines[0]?.split(' ')[1])
        const headers: Record<string, string> = {}
        for (const line of lines.slice(1)) {
          const colon = line.indexOf(':')
          headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
        }
        socket.off('data', onData)
        if (status === 101) { resolve(new RawWebSocket(socket, head.subarray(end + 4))); return }
        let body = head.subarray(end + 4).toString()
        socket.on('data', (more: Buffer) => { body += more.toString() })
        socket.once('close', () => resolve({ status, headers, body }))
      }
      socket.on('data', onData)
      socket.once('error', reject)
      socket.once('close', () => { if (head.indexOf('\r\n\r\n') < 0) resolve({ status: 0, headers: {}, body: head.toString() }) })
      socket.write([
        `GET ${options.path ?? ENGINE_PATH} HTTP/1.1`,
        'Host: 127.0.0.1',
        'Upgrade: websocket',
        'Connection: Upgrade',
        `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
        'Sec-WebSocket-Version: 13',
        ...(options.origin ? [`Origin: ${options.origin}`] : []),
        '', ''
      ].join('\r\n'))
    })
  }

  /** Opens and expects success: the Engine.IO open packet has arrived when this resolves. */
  static async engineIo (port: number, options: RawOptions = {}): Promise<RawWebSocket> {
    const ws = await RawWebSocket.open(port, options)
    if (!(ws instanceof RawWebSocket)) throw new Error(`upgrade refused: ${ws.status} ${ws.body}`)
    await ws.next(m => m.startsWith('0{'), 'the Engine.IO open packet')
    return ws
  }

  /** Sends each payload as a text frame, all of them in one TCP write. */
  send (...payloads: string[]): void {
    this.socket.write(Buffer.concat(payloads.map(p => frame(p))))
  }

  /** Sends bytes as they are (hand-made frames). */
  write (bytes: Buffer): void {
    this.socket.write(bytes)
  }

  /** Stops reading: the server's writes pile up in its buffers. */
  pause (): void {
    this.socket.pause()
  }

  /** Reads again (what piled up arrives; a connection the server ended then closes). */
  resume (): void {
    this.socket.resume()
  }

  destroy (): void {
    this.socket.destroy()
  }

  get isClosed (): boolean {
    return this.ended
  }

  /** Waits (bounded) for a message matching `match`, and returns it. */
  async next (match: (message: string) => boolean, what: string, timeoutMs = 10_000): Promise<string> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const found = this.messages.find(match)
      if (found !== undefined) return found
      if (this.ended) throw new Error(`connection closed while waiting for ${what}; got ${JSON.stringify(this.messages)}`)
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.messages)}`)
      await new Promise<void>(resolve => {
        const timer = setTimeout(resolve, left)
        this.waiters.push(() => { clearTimeout(timer); resolve() })
      })
    }
  }

  private receive (chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk])
    for (;;) {
      if (this.buffer.length < 2) return
      const opcode = (this.buffer[0] as number) & 0x0f
      let length = (this.buffer[1] as number) & 0x7f
      let offset = 2
      if (length === 126) {
        if (this.buffer.length < 4) return
        length = this.buffer.readUInt16BE(2)
        offset = 4
      } else if (length === 127) {
        if (this.buffer.length < 10) return
        length = Number(this.buffer.readBigUInt64BE(2))
        offset = 10
      }
      if (this.buffer.length < offset + length) return
      const payload = this.buffer.subarray(offset, offset + length)
      this.buffer = this.buffer.subarray(offset + length)
      if (opcode === 0x1) this.onMessage(payload.toString())
      else if (opcode === 0x9) this.socket.write(frame(payload, 0xa))
      else if (opcode === 0x8) this.socket.end()
    }
  }

  private onMessage (message: string): void {
    // Engine.IO ping: answer, or the server drops us after pingTimeout.
    if (message === '2') { this.send('3'); return }
    this.messages.push(message)
    this.wake()
  }

  private wake (): void {
    const waiters = this.waiters
    this.waiters = []
    for (const w of waiters) w()
  }
}

/** Socket.IO CONNECT to the main namespace with a token. */
export const connectPacket = (token: string) => `40${JSON.stringify({ token })}`

/** Socket.IO EVENT with an ack id. */
export const eventPacket = (id: number, ...args: unknown[]) => `42${id}${JSON.stringify(args)}`

/** The ack for `id`, parsed, once it arrived. */
export async function ackOf (ws: RawWebSocket, id: number): Promise<any> {
  const message = await ws.next(m => m.startsWith(`43${id}[`), `ack ${id}`)
  return (JSON.parse(message.slice(`43${id}`.length)) as unknown[])[0]
}
