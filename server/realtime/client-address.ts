// The client's IP address for a Socket.IO request, by the same TRUST_PROXY rule as
// Express's req.ip (docs/design.md §8): behind N trusted proxies the address N hops back in
// X-Forwarded-For, otherwise the peer's own address, so a client cannot forge a fresh budget.
import type { IncomingMessage } from 'node:http'
import proxyaddr from 'proxy-addr'

export function clientAddress (req: IncomingMessage, trustProxy: boolean | number): string {
  // Express compiles `trust proxy` true/N into exactly these functions.
  return proxyaddr(req, (_address, hop) => trustProxy === true || (typeof trustProxy === 'number' && hop < trustProxy))
}
