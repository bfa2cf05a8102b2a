// `contentd log @alice/demo [--path a.b] [--since N] [--follow] [--json]`: a project's change
// log as lines (docs/design.md §9); with --path, only the changes that touch the path, as
// `changes?path=` answers them (§15: projected where the change is above the path). Like the other commands it reads the configured store directly;
// --follow asks the store again every FOLLOW_INTERVAL_MS (the CLI is not a server and hears
// no commits), until SIGINT or SIGTERM.
import type { ChangeEntry } from '../../shared/events.js'
import type { PathChange } from '../../shared/live-path.js'
import { formatPath, parsePath } from '../../shared/path.js'
import { DEFAULT_CHANGES_PAGE_BYTES } from '../store/change-pages.js'
import { CONTENT_READS_PER_PAGE, readPathChanges } from '../store/path-changes.js'
import type { Projects } from '../services/projects.js'
import type { Store } from '../store/types.js'

const PAGE = 1000
export const FOLLOW_INTERVAL_MS = 500
/** A value longer than this is cut in the human format (--json prints it whole). */
const SHOWN_VALUE_CHARS = 120

export interface LogOptions {
  since: number
  /** Only the changes that touch this dot path (docs/design.md §15). */
  path?: string | undefined
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
  const path = options.path === undefined ? undefined : formatPath(parsePath(options.path))
  for (;;) {
    const page = path === undefined
      ? await store.readChanges(project, since, PAGE)
      : await readPathChanges(store, project, { path, since, limit: PAGE, pageBytes: DEFAULT_CHANGES_PAGE_BYTES, contentReads: CONTENT_READS_PER_PAGE })
    for (const change of page.changes) options.print(options.json ? JSON.stringify(change) : formatChange(change))
    since = page.changes.at(-1)?.version ?? since
    if (page.more) continue
    // A path's page ends at its last touching change; nothing after it, up to the version read, touches the path.
    if (path !== undefined) since = Math.max(since, page.version)
    if (!options.follow) return
    await Promise.race([new Promise(resolve => setTimeout(resolve, FOLLOW_INTERVAL_MS)), options.stopped])
    if (stop) return
  }
}

/** `5  2026-11-23T17:39:14.490Z  @alice  set title "Hello"`, tab-separated before the change itself. */
export function formatChange (sent: ChangeEntry | PathChange): string {
  const change: Partial<ChangeEntry> & Pick<ChangeEntry, 'version' | 'at' | 'actor' | 'op'> = sent
  let what = change.op
  if (change.path !== undefined) what += ` ${change.path === '' ? '(root)' : change.path}`
  if (change.index !== undefined) what += ` at ${change.index}`
  if (change.revertedTo !== undefined) what += ` to version ${change.revertedTo}`
  else if (change.value !== undefined) what += ` ${shorten(JSON.stringify(change.value))}`
  if ('projected' in sent) what += ' (projected)'
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
