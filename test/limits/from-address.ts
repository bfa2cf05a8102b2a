// An HTTP request sent from a chosen loopback source address (127.0.0.2, …), so one test
// can play several client IPs against a server listening on 127.0.0.1.
import { request } from 'node:http'

export interface AddressedResult { status: number, body: any, headers: Record<string, string | string[] | undefined> }

export function callFrom (localAddress: string, base: string, method: string, path: string, body?: unknown, token?: string): Promise<AddressedResult> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const headers: Record<string, string> = {}
    if (payload !== undefined) headers['content-type'] = 'application/json'
    if (token) headers.authorization = `Bearer ${token}`
    const req = request(base + path, { method, headers, localAddress }, res => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => { text += chunk })
      res.on('end', () => {
        let parsed: any
        try { parsed = text ? JSON.parse(text) : undefined } catch { parsed = undefined }
        resolve({ status: res.statusCode ?? 0, body: parsed, headers: res.headers })
      })
    })
    req.on('error', reject)
    req.end(payload)
  })
}
