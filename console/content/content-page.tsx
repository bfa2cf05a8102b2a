// The Content tab: the live document as a tree (or as raw JSON), with search, collapse and
// expand, and an empty state that says what to do first.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import type { Json, JsonObject } from '../../shared/client/index.js'
import { hrefOf } from '../route.js'
import { EmptyState, ErrorText, Loading, valueOf } from '../ui.js'
import { ActionError, ConflictNote, useAction } from './conflict.js'
import { AddForm, type Addition } from './editors.js'
import { childPath, valueAt } from './edits.js'
import type { LiveDocument } from './live-document.js'
import { RawEditor } from './raw-editor.js'
import { searchDocument, type SearchResult } from './search.js'
import { Children, TreeContext, type TreeContextValue } from './tree.js'
import { flash, OpenState, PAGE_SIZE, RowRegistry } from './tree-state.js'
import { preview } from './value-input.js'
import { actorName } from '../panels/history-text.js'
import { selectedPath, usePresence, ViewingNow } from './viewing-now.js'
import { MOST_WATCHES, PathWatches } from './path-watch.js'

/** Expand all opens at most this many values at once. */
const EXPAND_ALL_LIMIT = 3000

function countValues (doc: Json, limit: number): number {
  let count = 0
  const stack: Json[] = [doc]
  while (stack.length > 0 && count <= limit) {
    const value = stack.pop() as Json
    count++
    if (value !== null && typeof value === 'object') for (const child of Object.values(value)) stack.push(child)
  }
  return count
}

export function ContentPage ({ doc, canWrite, project, schemaReadable }: { doc: LiveDocument, canWrite: boolean, project: string, schemaReadable: boolean }) {
  const [view, setView] = useState<'tree' | 'json'>('tree')
  const [, setFrame] = useState(0)
  const [layout, setLayout] = useState(0)
  const [query, setQuery] = useState('')
  const [results, setResults] = useState<SearchResult | null>(null)
  const [adding, setAdding] = useState(false)
  const [rootPages, setRootPages] = useState(1)
  const [notice, setNotice] = useState<string | null>(null)
  /** The paths watched (path-watch.tsx), oldest first. */
  const [watches, setWatches] = useState<string[]>([])
  const open = useMemo(() => new OpenState(), [doc])
  const rows = useMemo(() => new RowRegistry(), [doc])
  const rootAction = useAction(doc)
  const rootBase = useRef(0)
  const pendingReveal = useRef<string | null>(null)
  const measuredEpoch = useRef(-1)
  const presence = usePresence(doc.project)
  /** Rows marked as selected (by this tab or by others), to unmark at the next render. */
  const marked = useRef<HTMLElement[]>([])
  const watching = useRef(watches)
  watching.current = watches
  // Read through a ref: the tree's context keeps the first render's function.
  const watch = (path: string) => {
    const now = watching.current
    if (now.includes(path)) return
    if (now.length >= MOST_WATCHES) { setNotice(`At most ${MOST_WATCHES} paths are watched at once: stop watching one first.`); return }
    setNotice(null)
    setWatches([...now, path])
  }
  // The focus goes back to the row's menu button (or the search field when the row is not shown).
  const stopWatching = (path: string) => {
    setWatches(now => now.filter(p => p !== path))
    queueMicrotask(() => (rows.get(path)?.querySelector<HTMLElement>('[aria-haspopup="menu"]') ?? document.getElementById('content-search'))?.focus())
  }
  const tree = useMemo<TreeContextValue>(() => ({ doc, canWrite, open, rows, relayout: () => setLayout(n => n + 1), watch }), [doc, canWrite, open, rows])

  useEffect(() => doc.onUpdate(() => setFrame(n => n + 1)), [doc])
  useEffect(() => () => rows.close(), [rows])

  // Search as the user types, a moment after they pause.
  useEffect(() => {
    if (query.trim() === '') { setResults(null); return }
    const timer = setTimeout(() => setResults(searchDocument(doc.content ?? {}, query, 100)), 150)
    return () => clearTimeout(timer)
  }, [query, doc, doc.content])

  // After every render: mark the selected rows, highlight what changed, finish a reveal, and time a new snapshot's render.
  useEffect(() => {
    for (const row of marked.current) { row.classList.remove('selected', 'watched'); row.removeAttribute('title') }
    marked.current = []
    if (view === 'tree') {
      const byPath = new Map<string, string[]>()
      for (const member of presence.members) {
        const path = selectedPath(member)
        if (path === null || member.id === presence.selfId) continue
        byPath.set(path, [...byPath.get(path) ?? [], actorName(member.actor)])
      }
      for (const [path, names] of byPath) {
        const row = rows.get(path)
        if (row) { row.classList.add('watched'); row.title = `Selected by ${names.join(', ')}`; marked.current.push(row) }
      }
      const own = presence.selected === null ? undefined : rows.get(presence.selected)
      if (own) { own.classList.add('selected'); marked.current.push(own) }
    }

    const changed = doc.takeFlashes()
    if (view === 'tree' && changed.length > 0) {
      const done = new Set<HTMLElement>()
      for (const path of changed) {
        const row = rows.nearest(path)
        if (row && !done.has(row) && rows.onScreen(row)) { done.add(row); flash(row) }
      }
    }
    const target = pendingReveal.current
    if (target !== null) {
      pendingReveal.current = null
      const row = rows.get(target)
      if (row) {
        row.scrollIntoView({ block: 'center' })
        row.querySelector('button')?.focus({ preventScroll: true })
        flash(row)
      }
    }
    if (doc.content && measuredEpoch.current !== doc.revisions.epoch) {
      measuredEpoch.current = doc.revisions.epoch
      // The next frame is painted: the snapshot is on screen (read by bench/scenarios/console.mjs).
      requestAnimationFrame(() => {
        performance.mark('contentd:rendered')
        try {
          performance.measure('contentd:render', 'contentd:snapshot', 'contentd:rendered')
          performance.measure('contentd:load', 'contentd:subscribe', 'contentd:rendered')
        } catch { /* no snapshot mark */ }
      })
    }
  })

  if (doc.state === 'ended' && !doc.content) {
    return <ErrorText message={`Cannot show the content: ${doc.error?.message ?? 'the subscription ended'}`} />
  }
  if (!doc.content) return <Loading what="the content" />
  const content = doc.content
  const size = Object.keys(content).length

  const reveal = (path: string) => {
    open.reveal(path)
    pendingReveal.current = path
    setView('tree')
    setLayout(n => n + 1)
  }
  // Selecting a value (clicking or focusing its row) shares its path with the other viewers.
  const selectFrom = (event: Event) => {
    const path = (event.target as Element | null)?.closest<HTMLElement>('.row[data-path]')?.dataset.path
    if (path !== undefined) presence.select(path)
  }
  const collapseAll = () => { open.collapseAll(); setNotice(null); setLayout(n => n + 1) }
  const expandAll = () => {
    const values = countValues(content, EXPAND_ALL_LIMIT)
    if (values > EXPAND_ALL_LIMIT) {
      setNotice(`This document holds more than ${EXPAND_ALL_LIMIT} values: too many to open at once. Search for what you need, or open sections one by one.`)
      return
    }
    setNotice(null)
    open.expandAll()
    setLayout(n => n + 1)
  }
  const startAdding = () => { rootBase.current = doc.version ?? 0; rootAction.clear(); setAdding(true) }
  const addAtRoot = async (addition: Addition) => {
    if (addition.kind !== 'key') return
    if (await rootAction.run({ op: 'set', path: addition.key, value: addition.value }, rootBase.current, undefined)) setAdding(false)
  }

  const revealedAtRoot = open.revealedChild('')
  const rootCount = Math.max(rootPages * PAGE_SIZE, revealedAtRoot === null ? 0 : (Math.floor(Object.keys(content).indexOf(revealedAtRoot) / PAGE_SIZE) + 1) * PAGE_SIZE)

  return (
    <TreeContext value={tree}>
      <div class="content-page">
        <ViewingNow presence={presence} />
        {doc.state === 'ended' && <p class="banner banner-bad" role="alert">Live updates stopped: {doc.error?.message}. Reload the page to try again.</p>}
        <div class="toolbar">
          <div class="segmented" role="group" aria-label="View">
            <button type="button" aria-pressed={view === 'tree'} onClick={() => setView('tree')}>Tree</button>
            <button type="button" aria-pressed={view === 'json'} onClick={() => setView('json')}>JSON</button>
          </div>
          {view === 'tree' && (
            <>
              <div class="search">
                <label for="content-search" class="visually-hidden">Search paths and values</label>
                <input id="content-search" type="search" placeholder="Search paths and values" value={query} onInput={e => setQuery(valueOf(e))} autocomplete="off" spellcheck={false} />
              </div>
              <div class="toolbar-group">
                <button type="button" class="button ghost small" onClick={collapseAll}>Collapse all</button>
                <button type="button" class="button ghost small" onClick={expandAll}>Expand all</button>
                {canWrite && <button type="button" class="button primary small" onClick={startAdding}>+ Add key</button>}
              </div>
            </>
          )}
        </div>
        {notice && <p class="notice" role="status">{notice}</p>}
        <PathWatches project={doc.project} paths={watches} onStop={stopWatching} />
        {view === 'tree' && results && <SearchResults results={results} content={content} onReveal={reveal} />}
        {view === 'json' && <RawEditor doc={doc} canWrite={canWrite} schemaReadable={schemaReadable} />}
        {view === 'tree' && (
          <>
            {adding && (
              <div class="root-add">
                <AddForm path="" container={content} busy={rootAction.busy} onAdd={addAtRoot} onCancel={() => { setAdding(false); rootAction.clear() }} />
              </div>
            )}
            <ActionError action={rootAction} doc={doc} />
            {rootAction.conflict && <ConflictNote doc={doc} conflict={rootAction.conflict} busy={rootAction.busy} onRetry={async () => { if (await rootAction.retry()) setAdding(false) }} onDiscard={() => { rootAction.clear(); setAdding(false) }} />}
            {size === 0 && !adding && <EmptyContent project={project} canWrite={canWrite} onAdd={startAdding} onPaste={() => setView('json')} />}
            {size > 0 && (
              <ul class="tree" ref={element => rows.attach('', element)} aria-label={`Content of ${project}`} onFocusIn={selectFrom} onClick={selectFrom}>
                <Children path="" value={content} depth={0} count={rootCount} layout={layout} />
                {size > rootCount && (
                  <li class="more">
                    <button type="button" class="text-button" onClick={() => setRootPages(p => p + 1)}>Show {Math.min(PAGE_SIZE, size - rootCount)} more ({size - rootCount} not shown)</button>
                  </li>
                )}
              </ul>
            )}
          </>
        )}
      </div>
    </TreeContext>
  )
}

function SearchResults ({ results, content, onReveal }: { results: SearchResult, content: JsonObject, onReveal: (path: string) => void }) {
  const count = results.matches.length
  return (
    <div class="search-results">
      <p class="search-count" role="status">{count === 0 ? 'No path or value matches.' : `${results.truncated ? `First ${count}` : count} match${count === 1 ? '' : 'es'}`}</p>
      {count > 0 && (
        <ul>
          {results.matches.map(match => {
            const now = valueAt(content, match.path)
            return (
              <li key={match.path}>
                <button type="button" class="search-hit" onClick={() => onReveal(match.path)}>
                  <span class="mono hit-path">{match.path}</span>
                  <span class="mono hit-value">{now === undefined ? '(removed)' : preview(now, 60)}</span>
                </button>
              </li>
            )
          })}
        </ul>
      )}
    </div>
  )
}

function EmptyContent ({ project, canWrite, onAdd, onPaste }: { project: string, canWrite: boolean, onAdd: () => void, onPaste: () => void }) {
  const example = childPath('data', 'visits')
  if (!canWrite) {
    return (
      <EmptyState title="No content yet" icon="{ }">
        <p>{project} holds an empty document. Someone with write access can add the first values; they appear here the moment they are saved.</p>
      </EmptyState>
    )
  }
  return (
    <EmptyState title="This project has no content yet" icon="{ }"
      actions={(
        <>
          <button type="button" class="button primary" onClick={onAdd}>+ Add the first key</button>
          <button type="button" class="button" onClick={onPaste}>Paste a JSON document</button>
          <a class="button ghost" href={hrefOf({ page: 'project', project, tab: 'connect' })}>Write from your app →</a>
        </>
      )}>
      <p>Its document is an empty object. Add a key here, paste a whole document, or let your app write to it —
        for example <code>increment {example}</code> creates <code>{'{"data":{"visits":1}}'}</code>. Whatever changes appears here live.</p>
    </EmptyState>
  )
}
