// The live-path rows of the results (bench/scenarios/live-paths.mjs, issue 29): their table
// and their four goals, kept apart from report.mjs's other tables. Each of the scenario's
// results names its goal (`goal`: quiet, resume, history, fanout).
import { fmt, latencyTable } from './format.mjs'

const pathRows = results => [results.paths].flat().filter(Boolean)
/** A measured row: not a failure to measure (a row that missed its goal still counts). */
const measured = r => r && !r.error && !r.pending

export function pathsTable (results) {
  return latencyTable(pathRows(results))
}

/** [name, value, target, met, show] rows for the goals table: undefined values read "not measured". */
export function pathGoals (results) {
  const find = goal => pathRows(results).find(r => measured(r) && r.goal === goal)
  const quiet = find('quiet')
  const resume = find('resume')
  const history = find('history')
  const fanout = find('fanout')
  const ms = v => `${fmt(v, 1)} ms`
  return [
    [`live paths: a subscriber to votes (1 MiB document): events for ${fmt(quiet?.changesElsewhere ?? 1000)} changes elsewhere, and of ${fmt(quiet?.changesOnPath ?? 100)} changes to votes`,
      quiet, '0, and all', v => v.elsewhere === 0 && v.onPath === v.changesOnPath, v => `${fmt(v.elsewhere)}, and ${fmt(v.onPath)} of ${fmt(v.changesOnPath)}`],
    ['live paths: resume after 1,000 missed changes, 10 on the path: p50', resume?.p50, '≤ 10 ms', v => v <= 10, v => `${ms(v)} (p99 ${ms(resume.p99)}, ${fmt(resume.samples)} resumes)`],
    [`live paths: changes?path= on a ${fmt(history?.logEntries ?? 100000)}-entry log, 1 % on the path: p50`, history?.p50, '≤ 20 ms', v => v <= 20, v => `${ms(v)} (p99 ${ms(history.p99)}, ${fmt(history.samples)} reads)`],
    [`live paths: server CPU per change, ${fmt(fanout?.subscribers ?? 1000)} path subscribers on 100 paths / as many whole-project subscribers`, fanout?.ratio, '≤ 1.2×', v => v <= 1.2, v => `${fmt(v, 2)}× (${fmt(fanout.pathMsPerChange, 2)} / ${fmt(fanout.wholeMsPerChange, 2)} ms)`]
  ]
}
