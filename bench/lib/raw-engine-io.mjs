// A bare Socket.IO client over a raw WebSocket, for load that a real client could not keep
// up with: it counts the frames it receives without decoding them (no allocation per
// message), answers the server's pings, and decodes text only while asked to (setting up).
// One bench process can so take the ~1,000,000 messages a second a presence fan-out sends.
// Just enough of RFC 6455: masked client frames, unmasked server frames without extensions.
import { randomBytes } from 'node:crypto'
import { connect } from 'node:net'

const PING = 0x32 // Engine.IO "2"

export class RawSocketIo {
  /** Text frames received since the connection opened. */
  frames = 0
  /** Text frames other than Engine.IO pings: the messages a fan-out counts. */
  messages = 0
  /** Called after each such message is counted (a fan-out member notes when it arrived). */
  onMessage = null
  /** Bytes received since the connection opened. */
  bytes = 0
  #socket
  #header = Buffer.alloc(14)
  #headerLength = 0
  #remaining = 0
  #collect = null
  #firstByte = 0
  #waiters = []
  /** Decoded messages no waiter has taken yet. */
  #inbox = []
  #decoding = true

  constructor (socket) {
    this.#socket = socket
    this.closed = new Promise(resolve => socket.once('close', resolve))
    socket.on('error', () => {})
    socket.setNoDelay(true)
  }

  /** Opens the WebSocket and the Socket.IO connection with `token`. */
  static async open (port, token) {
    const socket = connect({ port, host: '127.0.0.1' })
    const rest = await upgrade(socket)
    const client = new RawSocketIo(socket)
    socket.on('data', chunk => client.#receive(chunk))
    if (rest.length) client.#receive(rest)
    await client.next(text => text.startsWith('0{'))
    client.send(`40${JSON.stringify({ token })}`)
    const answer = await client.next(text => text.startsWith('40') || text.startsWith('44'))
    if (!answer.startsWith('40')) throw new Error(`connect refused: ${answer}`)
    return client
  }

  /** Resolves with the first text message that `predicate` accepts (while decoding). */
  next (predicate) {
    const early = this.#inbox.findIndex(predicate)
    if (early !== -1) return Promise.resolve(this.#inbox.splice(early, 1)[0])
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no answer within 10 s')), 10_000)
      this.#waiters.push(text => {
        if (!predicate(text)) return false
        clearTimeout(timer)
        resolve(text)
        return true
      })
    })
  }

  /** `emit(event, payload, ack)` with ack id `id`: resolves with the ack's payload. */
  async call (id, event, payload) {
    const answer = this.next(text => text.startsWith(`43${id}[`))
    this.send(`42${id}${JSON.stringify([event, payload])}`)
    return JSON.parse((await answer).slice(2 + String(id).length))[0]
  }

  /** From now on frames are only counted (and pings answered). */
  stopDecoding () {
    this.#decoding = false
    this.#waiters = []
    this.#inbox = []
  }

  send (text) {
    this.#socket.write(frame(Buffer.from(text)))
  }

  close () {
    this.#socket.destroy()
  }

  #receive (chunk) {
    this.bytes += chunk.length
    let offset = 0
    while (offset < chunk.length) {
      if (this.#remaining > 0) {
        const take = Math.min(this.#remaining, chunk.length - offset)
        if (this.#collect) this.#collect.push(chunk.subarray(offset, offset + take))
        this.#remaining -= take
        offset += take
        if (this.#remaining === 0) this.#finish()
        continue
      }
      this.#header[this.#headerLength++] = chunk[offset++]
      if (this.#headerLength < 2) continue
      const short = this.#header[1] & 0x7f
      const needed = short === 126 ? 4 : short === 127 ? 10 : 2
      if (this.#headerLength < needed) continue
      const length = short === 126 ? this.#header.readUInt16BE(2) : short === 127 ? Number(this.#header.readBigUInt64BE(2)) : short
      this.#firstByte = this.#header[0]
      this.#headerLength = 0
      this.#remaining = length
      // A one-byte payload may be a ping; anything while decoding is wanted whole.
      this.#collect = this.#decoding || length === 1 ? [] : null
      if (length === 0) this.#finish()
    }
  }

  #finish () {
    const opcode = this.#firstByte & 0x0f
    const parts = this.#collect
    this.#collect = null
    if (opcode === 0x9) { this.#socket.write(frame(parts ? Buffer.concat(parts) : Buffer.alloc(0), 0xa)); return }
    if (opcode !== 0x1) return
    this.frames++
    if (!parts) { this.messages++; this.onMessage?.(); return }
    const data = Buffer.concat(parts)
    if (data.length === 1 && data[0] === PING) { this.send('3'); return }
    this.messages++
    this.onMessage?.()
    if (!this.#decoding) return
    const text = data.toString()
    const taker = this.#waiters.findIndex(waiter => waiter(text))
    if (taker === -1) this.#inbox.push(text)
    else this.#waiters.splice(taker, 1)
  }
}

function upgrade (socket) {
  return new Promise((resolve, reject) => {
    let head = Buffer.alloc(0)
    const onData = chunk => {
      head = Buffer.concat([head, chunk])
      const end = head.indexOf('\r\n\r\n')
      if (end === -1) return
      socket.off('data', onData)
      const status = head.subarray(0, end).toString().split(' ')[1]
      if (status !== '101') { reject(new Error(`upgrade refused: ${status}`)); socket.destroy(); return }
      resolve(head.subarray(end + 4))
    }
    socket.on('data', onData)
    socket.once('error', reject)
    socket.once('connect', () => {
      socket.write([
        'GET /socket.io/?EIO=4&transport=websocket HTTP/1.1',
        'Host: 127.0.0.1',
        'Upgrade: websocket',
        'Connection: Upgrade',
        `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
        'Sec-WebSocket-Version: 13',
        '', ''
      ].join('\r\n'))
    })
  })
}

/** One masked client frame. */
function frame (data, opcode = 0x1) {
  const length = data.length
  const header = length < 126 ? Buffer.from([0x80 | opcode, 0x80 | length])
    : Buffer.from([0x80 | opcode, 0x80 | 126, length >> 8, length & 0xff])
  const mask = randomBytes(4)
  const masked = Buffer.alloc(length)
  for (let i = 0; i < length; i++) masked[i] = data[i] ^ mask[i % 4]
  return Buffer.concat([header, mask, masked])
}
