// A Server-Sent Events client for tests: fetch with a streamed body, frames parsed as the
// EventSource specification reads them (id, event, data; comment lines counted apart).
export interface SseEvent {
  id: string | undefined
  event: string
  data: string
}

export interface SseStream {
  status: number
  headers: Headers
  /** The body of a non-200 answer. */
  body: string
  events: SseEvent[]
  comments: number
  /** True once the server ended the stream. */
  ended: boolean
  /** Waits (bounded) until `condition` holds. */
  until (condition: () => boolean, what: string, timeoutMs?: number): Promise<void>
  /** The `change` events' data, parsed. */
  changes (): Array<{ version: number } & Record<string, unknown>>
  close (): void
}

export async function openEvents (base: string, path: string, options: { token?: string, lastEventId?: string, headers?: Record<string, string> } = {}): Promise<SseStream> {
  const controller = new AbortController()
  const headers: Record<string, string> = { accept: 'text/event-stream', ...options.headers }
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
  if (options.lastEventId !== undefined) headers['last-event-id'] = options.lastEventId
  const response = await fetch(base + path, { headers, signal: controller.signal })
  let waiters: Array<() => void> = []
  const wake = () => { const w = waiters; waiters = []; for (const f of w) f() }
  const stream: SseStream = {
    status: response.status,
    headers: response.headers,
    body: '',
    events: [],
    comments: 0,
    ended: false,
    until (condition, what, timeoutMs = 10_000) {
      if (condition()) return Promise.resolve()
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; got ${JSON.stringify(stream.events.map(e => e.id ?? e.event))}`)), timeoutMs)
        const check = () => {
          if (!condition()) { waiters.push(check); return }
          clearTimeout(timer)
          resolve()
        }
        waiters.push(check)
      })
    },
    changes: () => stream.events.filter(e => e.event === 'change').map(e => JSON.parse(e.data) as { version: number } & Record<string, unknown>),
    close: () => controller.abort()
  }
  if (response.status !== 200) {
    stream.body = await response.text()
    stream.ended = true
    return stream
  }
  void (async () => {
    const decoder = new TextDecoder()
    let buffer = ''
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true })
        let end: number
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const event: SseEvent = { id: undefined, event: 'message', data: '' }
          let isComment = true
          for (const line of frame.split('\n')) {
            if (line.startsWith(':')) continue
            isComment = false
            const colon = line.indexOf(':')
            const field = colon < 0 ? line : line.slice(0, colon)
            const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
            if (field === 'id') event.id = value
            else if (field === 'event') event.event = value
            else if (field === 'data') event.data = event.data === '' ? value : `${event.data}\n${value}`
          }
          if (isComment) stream.comments++
          else stream.events.push(event)
        }
        wake()
      }
    } catch { /* aborted */ }
    stream.ended = true
    wake()
  })()
  return stream
}
