// A subscribe's snapshot ack carries the whole document. Socket.IO's parser would walk it
// for binary attachments and then JSON.stringify it, for every snapshot: the longest block
// of the event loop a flooding subscriber could cause (~1 MiB per re-subscribe window,
// issue 12). The store already has the document's JSON text (ContentSnapshot.json, made once
// per version), so the ack is built around that text and handed to Socket.IO as a
// PreEncoded value, which the encoder below writes as it is. What reaches the client is the
// same packet, character for character, as for the equivalent object.
//
// The `change` event goes the same way: its one argument is the change's wire form
// (server/feed/wire.ts), made once per change for every transport, so a room's broadcast and
// a catch-up send write that text instead of serializing the entry again (issue 35).
//
// Installed as Socket.IO's `parser` option (its documented way to change the encoding);
// every other packet goes through socket.io-parser's own encoder unchanged.
import * as parser from 'socket.io-parser'

/** JSON text to send as an ack's or an event's one argument, without re-serializing it. */
export class PreEncoded {
  constructor (readonly json: string) {}
}

class PreEncodingEncoder extends parser.Encoder {
  override encode (packet: parser.Packet): ReturnType<parser.Encoder['encode']> {
    const data = Array.isArray(packet.data) ? packet.data as unknown[] : []
    // As socket.io-parser's encodeAsString: type, namespace unless "/", id, then the arguments.
    const namespace = packet.nsp && packet.nsp !== '/' ? `${packet.nsp},` : ''
    const head = `${packet.type}${namespace}${packet.id ?? ''}`
    if (packet.type === parser.PacketType.ACK && data.length === 1 && data[0] instanceof PreEncoded) return [`${head}[${data[0].json}]`]
    // An event: its name, then one pre-encoded argument.
    if (packet.type === parser.PacketType.EVENT && data.length === 2 && typeof data[0] === 'string' && data[1] instanceof PreEncoded) {
      return [`${head}[${JSON.stringify(data[0])},${data[1].json}]`]
    }
    return super.encode(packet)
  }
}

export const preEncodingParser = { ...parser, Encoder: PreEncodingEncoder }
