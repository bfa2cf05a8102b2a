// A real webhook receiver on a loopback port, for tests: records every request (headers and
// raw body) and answers what the test says. It can be closed and started again on the same
// port (a receiver that is down, then back).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'
import type { ChangeEntry } from '../../shared/events.js'

export interface Received {
  headers: Record<string, string>
  body: string
  at: number
}

/** How to answer a request: a status, or a function of the request (may be async: a slow receiver). */
export type Answer = number | ((received: Received, index: number) => number | Promise<number>)

export class Receiver {
  readonly received: Received[] = []
  answer: Answer = 204
  private server: Server | null = null
  port = 0

  get url (): string {
    return `http://127.0.0.1:${this.port}/hook`
  }

  async start (port = this.port): Promise<this> {
    const server = createServer((req, res) => { void this.handle(req, res) })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, '127.0.0.1', () => resolve())
    })
    this.server = server
    this.port = (server.address() as AddressInfo).port
    return this
  }

  async stop (): Promise<void> {
    const server = this.server
    if (!server) return
    this.server = null
    server.closeAllConnections()
    await new Promise<void>(resolve => server.close(() => resolve()))
  }

  /** Entries of the requests answered 2xx, parsed; `verify` with the webhook's secret first. */
  entries (): ChangeEntry[] {
    return this.received.map(r => JSON.parse(r.body) as ChangeEntry)
  }

  /** Throws unless every request carries a valid Standard Webhooks signature for `secret`. */
  verifyAll (secret: string): void {
    const webhook = new Webhook(secret)
    for (const r of this.received) webhook.verify(r.body, r.headers)
  }

  private async handle (req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const received: Received = { headers: flatHeaders(req), body: Buffer.concat(chunks).toString('utf8'), at: Date.now() }
    const index = this.received.length
    this.received.push(received)
    const status = typeof this.answer === 'number' ? this.answer : await this.answer(received, index)
    res.statusCode = status
    if (status >= 300 && status < 400) res.setHeader('location', 'http://127.0.0.1:1/elsewhere')
    res.end()
  }
}

function flatHeaders (req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers[name] = value
  return headers
}

export async function startReceiver (answer: Answer = 204): Promise<Receiver> {
  const receiver = new Receiver()
  receiver.answer = answer
  return receiver.start(0)
}

/** Polls an async condition (an API read) until it holds; fails loudly at the deadline. */
export async function eventually (condition: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 15))
  }
}
