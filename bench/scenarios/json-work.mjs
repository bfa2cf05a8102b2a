// JSON work per write (issue 35): how many times the server parses and serializes the written
// value for one `set` of ~96 KB with 2 Server-Sent Events streams, 1 Socket.IO subscriber and
// 1 webhook. Counted, not timed, by test/feed/json-work.test.ts (it wraps JSON.parse and
// JSON.stringify around the write and prints the counts); this scenario runs it and reads
// the printed line, so the goals table shows the same numbers the test asserts.
import { runCountingTest } from '../lib/counted-test.mjs'

const LINE = /JSON work per write \(96 KB set; 2 SSE, 1 Socket\.IO, 1 webhook\): (\d+) parse \/ (\d+) serialization/

export async function jsonWork () {
  const output = await runCountingTest('test/feed/json-work.test.ts')
  const match = LINE.exec(output.text)
  if (!match) return { scenario: 'JSON work per write', kind: 'json-work', failed: true, error: `the counter printed no counts (vitest exit ${output.code})` }
  const parses = Number(match[1])
  const serializations = Number(match[2])
  return { scenario: 'JSON work per write', kind: 'json-work', parses, serializations, failed: output.code !== 0 }
}
