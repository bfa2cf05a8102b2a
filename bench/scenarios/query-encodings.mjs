// Live queries (issue 30): "a change that does not alter a result costs no serialization for
// that query". Counted, not timed, by test/queries/query-serialization.test.ts (it wraps
// JSON.stringify while the changes are made, asserts the counts and prints them); this
// scenario runs it and reads the printed line, as json-work.mjs does.
import { runCountingTest } from '../lib/counted-test.mjs'

const LINE = /Live query event serializations \(3 Socket\.IO subscribers and 1 SSE stream of one result\): (\d+) for 30 changes that alter no result \/ (\d+) for 1 that alters it/

export async function queryEncodings () {
  const scenario = 'live query event serializations'
  const output = await runCountingTest('test/queries/query-serialization.test.ts')
  const match = LINE.exec(output.text)
  if (!match) return { scenario, kind: 'json-work', failed: true, error: `the counter printed no counts (vitest exit ${output.code})` }
  return { scenario, kind: 'json-work', unaltered: Number(match[1]), altered: Number(match[2]), failed: output.code !== 0 }
}
