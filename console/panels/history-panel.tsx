// The History tab (docs/change-log.md): the project's changes, newest first, with who made
// each and when; new changes join the top while it is open (the live document says when the
// version moved; the entries themselves come from the change log). Any version opens
// read-only, with what differs from now, and editors and the owner can revert to it (one new
// change, after a confirmation).
import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import type { ChangeEntry, ChangesPage, Json, PathChange, ProjectClient } from '../../shared/client/index.js'
import { useApp } from '../app-context.js'
import { LiveDocument } from '../content/live-document.js'
import { Children, TreeContext, type TreeContextValue } from '../content/tree.js'
import { OpenState, PAGE_SIZE, RowRegistry } from '../content/tree-state.js'
import { preview } from '../content/value-input.js'
import { ContentdError } from '../../shared/client/index.js'
import { Badge, ConfirmButton, EmptyState, ErrorText, Loading, Time, valueOf } from '../ui.js'
import { actorName, diffPaths, entryTarget } from './history-text.js'
import { usePathTimeline } from './path-timeline.js'

/** How long the filter waits after the last keystroke before asking the server. */
const FILTER_PAUSE_MS = 300

/** Entries read per page ("Show older"). */
const PAGE = 50

/**
 * The `limit` entries after `since` (fewer when the log ends first). The server's pages also
 * end at CHANGES_PAGE_BYTES (docs/change-log.md), so this follows `more` until it has them.
 */
async function changesPage (project: ProjectClient, since: number, limit: number): Promise<ChangesPage> {
  let collected: ChangesPage | undefined
  for await (const page of project.changes({ since, limit })) {
    collected = collected === undefined ? page : { ...page, changes: [...collected.changes, ...page.changes] }
    if (collected.changes.length >= limit) break
  }
  if (!collected) throw new Error('The change log answered no page')
  return { ...collected, changes: collected.changes.slice(0, limit) }
}

interface Timeline {
  /** Newest first. */
  entries: ChangeEntry[]
  /** The newest version read (the top of the list). */
  newest: number
  /** The entries from version `oldest` on are read; older ones are read on demand. */
  oldest: number
  /** The server no longer keeps the entries before `oldest` (410 HISTORY_EXPIRED). */
  expired: boolean
}

interface Viewed {
  version: number
  content: Json | null
  error: string | null
}

export function HistoryPanel ({ doc, canWrite }: { doc: LiveDocument, canWrite: boolean }) {
  const { failure, announce } = useApp()
  const client = doc.project
  const [timeline, setTimeline] = useState<Timeline | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [loadingOlder, setLoadingOlder] = useState(false)
  const [filter, setFilter] = useState('')
  /** The path the filter asks the server about, once the user paused typing ('' : no filter). */
  const [filterPath, setFilterPath] = useState('')
  const filtered = usePathTimeline(doc, filterPath)
  const [viewed, setViewed] = useState<Viewed | null>(null)
  const [reverting, setReverting] = useState(false)
  const [revertError, setRevertError] = useState<string | null>(null)
  /** The timeline as the live listener sees it, and whether it is reading newer entries. */
  const current = useRef<Timeline | null>(null)
  const readingNewer = useRef(false)
  current.current = timeline

  // The newest page: the current version from the project's details, then the entries below it.
  useEffect(() => {
    let alive = true
    void (async () => {
      try {
        const { version } = await doc.project.info()
        // A server keeping fewer than a page of entries (HISTORY_LIMIT) answers 410 for an
        // older `since`: ask for fewer until it answers.
        let size = Math.min(PAGE, version)
        for (;;) {
          const since = version - size
          try {
            const page = await changesPage(client, since, PAGE)
            if (!alive) return
            setTimeline({ entries: [...page.changes].reverse(), newest: page.changes.at(-1)?.version ?? since, oldest: since + 1, expired: size < Math.min(PAGE, version) })
            return
          } catch (e) {
            if (!(e instanceof ContentdError && e.code === 'HISTORY_EXPIRED' && size > 1)) throw e
            size = Math.floor(size / 2)
          }
        }
      } catch (e) {
        if (alive) setError(failure(e))
      }
    })()
    return () => { alive = false }
  }, [client, doc])

  // New changes join the top: when the live version passes the newest entry, read what is after it.
  useEffect(() => {
    const readNewer = async () => {
      const known = current.current
      if (!known || readingNewer.current || (doc.version ?? 0) <= known.newest) return
      readingNewer.current = true
      try {
        let since = known.newest
        const added: ChangeEntry[] = []
        for await (const page of client.changes({ since, limit: 1000 })) {
          added.push(...page.changes)
          since = page.changes.at(-1)?.version ?? since
        }
        setTimeline(t => t && { ...t, entries: [...added.filter(e => e.version > t.newest).reverse(), ...t.entries], newest: Math.max(t.newest, since) })
      } catch (e) {
        setError(failure(e))
      } finally {
        readingNewer.current = false
      }
      // More may have come in meanwhile.
      if ((doc.version ?? 0) > (current.current?.newest ?? 0)) setTimeout(() => { void readNewer() }, 0)
    }
    void readNewer()
    return doc.onUpdate(() => { void readNewer() })
  }, [client, doc, timeline !== null])

  useEffect(() => {
    const timer = setTimeout(() => setFilterPath(filter.trim()), FILTER_PAUSE_MS)
    return () => clearTimeout(timer)
  }, [filter])

  const older = async () => {
    if (!timeline || timeline.oldest <= 1) return
    setLoadingOlder(true)
    const since = Math.max(0, timeline.oldest - 1 - PAGE)
    try {
      const page = await changesPage(client, since, timeline.oldest - 1 - since)
      setTimeline(t => t && { ...t, entries: [...t.entries, ...[...page.changes].reverse()], oldest: since + 1 })
    } catch (e) {
      if (e instanceof ContentdError && e.code === 'HISTORY_EXPIRED') setTimeline(t => t && { ...t, expired: true })
      else setError(failure(e))
    } finally {
      setLoadingOlder(false)
    }
  }

  const view = async (version: number) => {
    setRevertError(null)
    setViewed({ version, content: null, error: null })
    try {
      const { value } = await client.at<Json>(version)
      setViewed(v => v?.version === version ? { version, content: value, error: null } : v)
    } catch (e) {
      setViewed(v => v?.version === version ? { version, content: null, error: failure(e) } : v)
    }
  }

  const revert = async (version: number) => {
    setReverting(true)
    setRevertError(null)
    try {
      const made = (await client.revert(version)).version
      announce(`Reverted to v${version}${made === undefined ? '' : `: the content is now v${made}`}.`)
      setViewed(null)
    } catch (e) {
      setRevertError(failure(e))
    } finally {
      setReverting(false)
    }
  }

  if (error && !timeline) return <ErrorText message={error} />
  if (!timeline) return <Loading what="the history" />
  const latest = doc.version ?? timeline.newest
  // With a path: the server's changes?path= (the path timeline); the whole log's pages otherwise.
  const byPath = filterPath !== ''
  const path = filtered.timeline
  const shown: PathChange[] = byPath ? path?.entries ?? [] : timeline.entries
  const canOlder = byPath ? path !== null && path.oldest > 1 && !path.expired : timeline.oldest > 1 && !timeline.expired
  const expired = byPath ? path?.expired === true : timeline.expired
  const busyOlder = byPath ? filtered.loadingOlder : loadingOlder

  return (
    <div class="history">
      {viewed && (
        <VersionView viewed={viewed} client={doc.project} now={doc.content} latest={latest} canWrite={canWrite} reverting={reverting} revertError={revertError}
          onRevert={() => { void revert(viewed.version) }} onClose={() => setViewed(null)} />
      )}
      <section class="panel" aria-labelledby="timeline-title">
        <div class="panel-head">
          <h2 id="timeline-title">Changes</h2>
          <div class="field filter">
            <label for="history-filter" class="visually-hidden">Filter changes by path</label>
            <input id="history-filter" type="search" placeholder="Filter by path, e.g. stats.visits" value={filter} onInput={e => setFilter(valueOf(e))} autocomplete="off" spellcheck={false}
              aria-describedby={byPath && filtered.error ? 'history-filter-error' : undefined} aria-invalid={byPath && filtered.error !== null ? true : undefined} />
          </div>
        </div>
        <ErrorText message={error} />
        {byPath && filtered.error && <p id="history-filter-error" class="field-error" role="alert">{filtered.error}</p>}
        {!byPath && timeline.entries.length === 0 && (
          <EmptyState title="No changes yet" icon="⟲">
            <p>Every change to the content will be listed here, with who made it and when.</p>
          </EmptyState>
        )}
        {byPath && !path && !filtered.error && <Loading what={`the changes to ${filterPath}`} />}
        {byPath && path && (
          <p class="hint" role="status">
            {path.entries.length === 0 ? `No change${path.oldest > 1 ? ' read so far' : ''} touches ${filterPath}.` : `Changes that touch ${filterPath} (at, above or below it), as the server finds them.`}
          </p>
        )}
        <ol class="timeline" aria-label={byPath ? `Changes to ${filterPath}, newest first` : 'Changes, newest first'}>
          {shown.map(entry => (
            <li key={entry.version} class="change" data-version={entry.version}>
              <span class="change-version mono">v{entry.version}</span>
              <span class="change-what">
                <Badge tone={entry.op === 'revert' ? 'warn' : entry.op === 'delete' ? 'bad' : 'plain'}>{entry.op}</Badge>
                <span class="mono change-path">{entryTarget(entry)}</span>
                {entry.value !== undefined && entry.op !== 'update' && entry.op !== 'revert' && <span class="mono change-value">{preview(entry.value, 60)}</span>}
                {'projected' in entry && <span class="change-projected" title="A change above this path or of the whole content, shown as what the path became">(what the path became)</span>}
              </span>
              <span class="change-who">
                <span class="change-actor">{actorName(entry.actor)}</span> · <Time iso={entry.at} />
              </span>
              <span class="change-actions">
                <button type="button" class="button small" aria-pressed={viewed?.version === entry.version} onClick={() => { void view(entry.version) }}>
                  View<span class="visually-hidden"> v{entry.version}</span>
                </button>
              </span>
            </li>
          ))}
        </ol>
        {canOlder && (
          <button type="button" class="button ghost" disabled={busyOlder} onClick={() => { if (byPath) filtered.older(); else void older() }}>
            {busyOlder ? 'Loading…' : 'Show older changes'}
          </button>
        )}
        {expired && <p class="hint">Older changes are no longer kept: this server keeps each project's newest changes only (HISTORY_LIMIT).</p>}
      </section>
    </div>
  )
}

interface VersionViewProps {
  viewed: Viewed
  client: ProjectClient
  now: Json | undefined
  latest: number
  canWrite: boolean
  reverting: boolean
  revertError: string | null
  onRevert: () => void
  onClose: () => void
}

/** One version, read-only: its tree, what differs from now, and "Revert to this version". */
function VersionView ({ viewed, client, now, latest, canWrite, reverting, revertError, onRevert, onClose }: VersionViewProps) {
  const { version, content } = viewed
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => { heading.current?.focus() }, [version])
  // The tree's nodes read a LiveDocument: this one holds the old version and is never started.
  const tree = useMemo<TreeContextValue | null>(() => {
    if (content === null || typeof content !== 'object' || Array.isArray(content)) return null
    const still = new LiveDocument(client, () => {})
    still.content = content
    still.version = version
    still.state = 'live'
    return { doc: still, canWrite: false, open: new OpenState(), rows: new RowRegistry(), relayout: () => {} }
  }, [content, client, version])
  const diff = useMemo(() => content !== null && now !== undefined ? diffPaths(content, now, 50) : null, [content, now])

  return (
    <section class="panel version-view" aria-labelledby="version-title">
      <div class="panel-head">
        <h2 id="version-title" ref={heading} tabIndex={-1}>The content at v{version}</h2>
        <button type="button" class="button ghost small" onClick={onClose}>Close</button>
      </div>
      <ErrorText message={viewed.error} />
      {content === null && !viewed.error && <Loading what={`v${version}`} />}
      {diff && (
        <details class="diff">
          <summary>{differenceSummary(diff.differences.length, diff.truncated, latest)}</summary>
          <ul class="diff-list">
            {diff.differences.map(d => (
              <li key={d.path}><Badge tone={d.kind === 'added' ? 'ok' : d.kind === 'removed' ? 'bad' : 'warn'}>{d.kind === 'added' ? 'added since' : d.kind === 'removed' ? 'removed since' : 'changed since'}</Badge> <span class="mono">{d.path || '(root)'}</span></li>
            ))}
          </ul>
        </details>
      )}
      {tree && (
        <TreeContext value={tree}>
          {Object.keys(tree.doc.content ?? {}).length === 0
            ? <p class="hint">The content was empty at v{version}.</p>
            : (
              <ul class="tree" aria-label={`Content at v${version}`}>
                <Children path="" value={tree.doc.content ?? {}} depth={0} count={PAGE_SIZE} layout={0} />
              </ul>
              )}
        </TreeContext>
      )}
      {tree && Object.keys(tree.doc.content ?? {}).length > PAGE_SIZE && <p class="hint">The first {PAGE_SIZE} keys are shown.</p>}
      {content !== null && canWrite && version !== latest && (
        <div class="version-actions">
          <ConfirmButton label={`Revert to v${version}`} confirmLabel="Revert" busy={reverting} onConfirm={onRevert}
            question={`Make the content what it was at v${version}? This adds a new version; the history stays.`}>
            Revert to v{version}
          </ConfirmButton>
        </div>
      )}
      {content !== null && version === latest && <p class="hint">This is the current version.</p>}
      <ErrorText message={revertError} />
    </section>
  )
}

function differenceSummary (count: number, truncated: boolean, latest: number): string {
  if (count === 0) return 'Same as the current content'
  if (truncated) return `More than ${count} paths differ from the current content (v${latest})`
  return `${count} path${count === 1 ? ' differs' : 's differ'} from the current content (v${latest})`
}
