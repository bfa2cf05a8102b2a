// `Expect: 100-continue` (RFC 9110 §10.1.1): the client waits for `100 Continue` before it
// sends the body. Node sends it for every such request unless told otherwise; a body the app
// will refuse for its declared length is not invited (docs/design.md §13b): the request goes
// to the app without `100 Continue`, the app answers 413 (body.ts), and Node closes the
// connection, since the body was never asked for.
import type { Server } from 'node:http'
import { declaresTooLarge } from './body.js'

export function inviteBodiesWithin (server: Server, limitBytes: number): void {
  server.on('checkContinue', (req, res) => {
    if (!declaresTooLarge(req.headers['content-length'], limitBytes)) res.writeContinue()
    server.emit('request', req, res)
  })
}
