// A subscribe's snapshot ack carries the whole document. Socket.IO's parser would walk it
// for binary attachments and then JSON.stringify it, for every snapshot: the longest block
// of the event loop a flooding subscriber could cause (~1 MiB per re-subscribe window,
// issue 12). The store already has the document's JSON text (ContentSnapshot.json, made once
// per version), so the ack is built around that text and handed to Socket.IO as a
// PreEncoded value, which the encoder below writes as it is. What reaches the client is the
// same packet, character for character, as for the equivalent object.
//
// Installed as Socket.IO's `parser` option (its documented way to change the encoding);
// every other packet goes through socket.io-parser's own encoder unchanged.
import * as parser from 'socket.io-parser'

/** JSON text to send as an ack's one argument, without re-serializing it. */
export class PreEncoded {
  constructor (readonly json: string) {}
}

class PreEncodingEncoder extends parser.Encoder {
  override encode (packet: parser.Packet): ReturnType<parser.Encoder['encode']> {
    const [only, ...rest] = Array.isArray(packet.data) ? packet.data as unknown[] : []
    if (packet.type !== parser.PacketType.ACK || !(only instanceof PreEncoded) || rest.length > 0) return super.encode(packet)
    // As socket.io-parser's encodeAsString: type, namespace unless "/", id, then the arguments.
    const namespace = packet.nsp && packet.nsp !== '/' ? `${packet.nsp},` : ''
    return [`${packet.type}${namespace}${packet.id ?? ''}[${only.json}]`]
  }
}

export const preEncodingParser = { ...parser, Encoder: PreEncodingEncoder }
