// Snapshot acks are written around the store's JSON text, and `change` events around the
// change's one wire form (server/realtime/pre-encoded.ts, server/feed/wire.ts):
// the packet must be exactly what socket.io-parser makes of the equivalent object, in every
// namespace and for any id, and every other packet must go through its encoder unchanged.
// That the client receives the document is shown by the realtime tests (subscribe acks).
import * as parser from 'socket.io-parser'
import { describe, expect, it } from 'vitest'
import { PreEncoded, preEncodingParser } from '../../server/realtime/pre-encoded.js'

const ack = { ok: true, project: '@alice/demo', version: 7, content: { title: 'Hé "quoted" \u2028', items: [1, 2.5, null, { deep: [true] }], empty: {} } }

describe('pre-encoded snapshot acks', () => {
  const ours = new preEncodingParser.Encoder()
  const theirs = new parser.Encoder()

  for (const [nsp, id] of [['/', 0], ['/', 12345], ['/admin', 3]] as const) {
    it(`an ack in namespace ${nsp} with id ${id}: the same packet as socket.io-parser's for the object`, () => {
      const packet = (data: unknown[]) => ({ type: parser.PacketType.ACK, nsp, id, data })
      const encoded = ours.encode(packet([new PreEncoded(JSON.stringify(ack))]))
      expect(encoded).toEqual(theirs.encode(packet([ack])))
      // And the client's decoder reads the object back.
      const decoder = new parser.Decoder()
      let decoded: unknown
      decoder.on('decoded', (p: parser.Packet) => { decoded = p.data })
      decoder.add(encoded[0] as string)
      expect(decoded).toEqual([ack])
    })
  }

  it('leaves every other packet to socket.io-parser: events, acks of plain objects, several arguments, binaries', () => {
    const packets = [
      { type: parser.PacketType.EVENT, nsp: '/', data: ['change', { version: 1 }] },
      { type: parser.PacketType.ACK, nsp: '/', id: 1, data: [{ ok: false, code: 'RATE_LIMITED' }] },
      { type: parser.PacketType.ACK, nsp: '/', id: 2, data: [{ a: 1 }, { b: 2 }] },
      { type: parser.PacketType.EVENT, nsp: '/', data: ['blob', Buffer.from([1, 2, 3])] },
      { type: parser.PacketType.CONNECT, nsp: '/', data: { sid: 'x' } }
    ]
    for (const packet of packets) expect(ours.encode(packet)).toEqual(theirs.encode(packet))
  })

  it('a PreEncoded value among other arguments is not taken for a snapshot ack', () => {
    const packet = { type: parser.PacketType.ACK, nsp: '/', id: 4, data: [new PreEncoded('{}'), 1] }
    expect(ours.encode(packet)).toEqual(theirs.encode(packet))
  })
  for (const [nsp, id] of [['/', undefined], ['/admin', undefined], ['/', 9]] as const) {
    it(`a change event in namespace ${nsp}${id === undefined ? '' : ` with id ${id}`}: the same packet as socket.io-parser's for the entry`, () => {
      const change = { project: '@alice/demo', version: 8, op: 'set', path: 'a.b', value: ack.content, at: '2026-11-27T00:00:00.000Z', actor: { type: 'user', name: '@alice' } }
      const packet = (argument: unknown) => ({ type: parser.PacketType.EVENT, nsp, ...(id === undefined ? {} : { id }), data: ['change', argument] })
      const encoded = ours.encode(packet(new PreEncoded(JSON.stringify(change))))
      expect(encoded).toEqual(theirs.encode(packet(change)))
      const decoder = new parser.Decoder()
      let decoded: unknown
      decoder.on('decoded', (p: parser.Packet) => { decoded = p.data })
      decoder.add(encoded[0] as string)
      expect(decoded).toEqual(['change', change])
    })
  }
})
