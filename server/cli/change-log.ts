// `contentd log @alice/demo [--since N] [--follow] [--json]`: a project's change log as
// lines (docs/design.md §9). Like the other commands it reads the configured store directly;
// --follow asks the store again every FOLLOW_INTERVAL_MS (the CLI is not a server and hears
// no commits), until SIGINT or SIGTERM.
import type { ChangeEntry } from '../../shared/events.js'
import type { Projects } from '../services/projects.js'
import type { Store } from '../store/types.js'

const PAGE = 1000
export const FOLLOW_INTERVAL_MS = 500
/** A value longer than this is cut in the human format (--json prints it whole). */
const SHOWN_VALUE_CHARS = 120

export interface LogOptions {
  since: number
  follow: boolean
  json: boolean
  /** Writes one line (without its newline). */
  print (line: string): void
  /** Resolves when --follow should stop. */
  stopped: Promise<void>
}

export async function printChangeLog (store: Store, projects: Projects, owner: string, slug: string, options: LogOptions): Promise<void> {
  const project = await projects.find(owner, slug)
  let stop = false
  void options.stopped.then(() => { stop = true })
  let since = options.since
  for (;;) {
    const page = await store.readChanges(project, since, PAGE)
    for (const change of page.changes) options.print(options.json ? JSON.stringify(change) : formatChange(change))
    since = page.changes.at(-1)?.version ?? since
    if (page.more) continue
    if (!options.follow) return
    await Promise.race([new Promise(resolve => setTimeout(resolve, FOLLOW_INTERVAL_MS)), options.stopped])
    if (stop) return
  }
}

/** `5  2026-11-23T17:39:14.490Z  @alice  set title "Hello"`, tab-separated before the change itself. */
export function formatChange (change: ChangeEntry): string {
  let what = change.op
  if (change.path !== undefined) what += ` ${change.path === '' ? '(root)' : change.path}`
  if (change.index !== undefined) what += ` at ${change.index}`
  if (change.revertedTo !== undefined) what += ` to version ${change.revertedTo}`
  else if (change.value !== undefined) what += ` ${shorten(JSON.stringify(change.value))}`
  return `${change.version}\t${change.at}\t${actorText(change.actor)}\t${what}`
}

function actorText (actor: ChangeEntry['actor']): string {
  switch (actor.type) {
    case 'user': return actor.name
    case 'key': return `key "${actor.name}" (${actor.id})`
    case 'system': return `system (${actor.name})`
    case 'app': return `app user "${actor.sub}"`
  }
}

function shorten (json: string): string {
  return json.length <= SHOWN_VALUE_CHARS ? json : `${json.slice(0, SHOWN_VALUE_CHARS - 1)}…`
}
