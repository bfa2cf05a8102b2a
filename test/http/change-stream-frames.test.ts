// Server-Sent Events streams of one project (server/http/change-stream.ts) frame each live
// change once for all of them (docs/design.md §13b, issue 26 finding 2): with many streams,
// one JSON serialization per change, and every stream writes the very same Buffer.
import { EventEmitter } from 'node:events'
import type { Response } from 'express'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ChangeStream } from '../../server/http/change-stream.js'
import type { ProjectRecord, Store } from '../../server/store/types.js'
import type { ChangeEntry } from '../../shared/events.js'

const STREAMS = 50

/** A response that takes everything at once and records what it was given. */
class RecordingResponse extends EventEmitter {
  readonly chunks: Array<string | Buffer> = []
  writableLength = 0
  writableNeedDrain = false
  write (chunk: string | Buffer): boolean { this.chunks.push(chunk); return true }
  end (): void { this.emit('close') }
  destroy (): void { this.emit('close') }
}

const project = { id: 'prj_frames' } as ProjectRecord
// The streams start live at version 0: nothing is read from the store.
const store = {} as Store

function change (version: number): ChangeEntry {
  return { project: '@alice/demo', version, op: 'set', path: 'title', value: `value ${version} `.repeat(1000), at: new Date().toISOString(), actor: { type: 'user', name: '@alice' } } as ChangeEntry
}

afterEach(() => { vi.restoreAllMocks() })

describe('live SSE frames', () => {
  it(`${STREAMS} streams of a project: one serialization per change, the same Buffer written to each`, () => {
    const responses = Array.from({ length: STREAMS }, () => new RecordingResponse())
    const streams = responses.map(res => {
      const stream = new ChangeStream({ store, project, res: res as unknown as Response, bufferBytes: 1 << 30, onSlowConsumer: () => {}, onEnd: () => {} }, 0, false)
      stream.start(0)
      return stream
    })
    const changes = [change(1), change(2), change(3)]
    const stringify = vi.spyOn(JSON, 'stringify')
    // As the live feed delivers: every stream gets the same entry object.
    for (const entry of changes) for (const stream of streams) stream.receive(entry)
    const serializedChanges = stringify.mock.calls.filter(([value]) => changes.includes(value as ChangeEntry))
    expect(serializedChanges).toHaveLength(changes.length)
    for (const res of responses) {
      expect(res.chunks).toHaveLength(changes.length)
      res.chunks.forEach((chunk, i) => expect(chunk).toBe(responses[0]!.chunks[i]))
    }
    const text = responses[0]!.chunks.map(chunk => chunk.toString()).join('')
    expect(text).toBe(changes.map(c => `id: ${c.version}\nevent: change\ndata: ${JSON.stringify(c)}\n\n`).join(''))
  })
})
