// The History tab's path filter (docs/console.md#history): the changes that touch one path,
// newest first, as the server's `changes?path=` answers them (docs/design.md §15) — never a
// page of the whole log filtered in the browser. Changes made while it is shown join the top;
// older ones are read on demand.
import { useEffect, useRef, useState } from 'preact/hooks'
import type { PathChange, PathRef } from '../../shared/client/index.js'
import { useApp } from '../app-context.js'
import { newestPathChanges, pathChangesAfter, type PathChangesReader } from '../content/path-history.js'
import type { LiveDocument } from '../content/live-document.js'

/** Changes shown at first, and added by "Show older changes". */
const PAGE = 50

export interface PathTimeline {
  path: string
  /** Newest first. */
  entries: PathChange[]
  /** Every change touching the path up to this version is read. */
  newest: number
  /** …and from this one on (older ones on demand). */
  oldest: number
  expired: boolean
}

export interface PathTimelineState {
  timeline: PathTimeline | null
  /** Why the path cannot be read (an invalid path, a refusal): shown at the filter. */
  error: string | null
  loadingOlder: boolean
  older (): void
}

const readerOf = (ref: PathRef): PathChangesReader => options => ref.changes(options)

/** The timeline of `path` ('' : none, nothing is read). */
export function usePathTimeline (doc: LiveDocument, path: string): PathTimelineState {
  const { failure } = useApp()
  const [timeline, setTimeline] = useState<PathTimeline | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [loadingOlder, setLoadingOlder] = useState(false)
  const current = useRef<PathTimeline | null>(null)
  const readingNewer = useRef(false)
  current.current = timeline

  const refOf = (wanted: string): PathRef | string => {
    try {
      return doc.project.ref(wanted)
    } catch (e) {
      // An invalid path is refused by the SDK before anything is sent (INVALID_PATH).
      return failure(e)
    }
  }

  useEffect(() => {
    setTimeline(null)
    setError(null)
    if (path === '') return
    const ref = refOf(path)
    if (typeof ref === 'string') { setError(ref); return }
    let alive = true
    void (async () => {
      try {
        const upTo = doc.version ?? (await doc.project.info()).version
        const part = await newestPathChanges(readerOf(ref), upTo, PAGE)
        if (alive) setTimeline({ path, entries: [...part.changes].reverse(), newest: upTo, oldest: part.from, expired: part.expired })
      } catch (e) {
        if (alive) setError(failure(e))
      }
    })()
    return () => { alive = false }
  }, [doc, path])

  // New changes join the top: when the live version passes the newest read, read what touches the path after it.
  useEffect(() => {
    if (timeline === null) return
    const readNewer = async () => {
      const known = current.current
      if (!known || readingNewer.current || (doc.version ?? 0) <= known.newest) return
      const ref = refOf(known.path)
      if (typeof ref === 'string') return
      readingNewer.current = true
      try {
        const after = await pathChangesAfter(readerOf(ref), known.newest)
        setTimeline(t => t && t.path === known.path
          ? { ...t, entries: [...after.changes.filter(e => e.version > t.newest).reverse(), ...t.entries], newest: Math.max(t.newest, after.version) }
          : t)
      } catch (e) {
        setError(failure(e))
      } finally {
        readingNewer.current = false
      }
      if ((doc.version ?? 0) > (current.current?.newest ?? Infinity)) setTimeout(() => { void readNewer() }, 0)
    }
    void readNewer()
    return doc.onUpdate(() => { void readNewer() })
  }, [doc, timeline?.path])

  const older = () => {
    const known = current.current
    if (!known || known.oldest <= 1 || known.expired) return
    const ref = refOf(known.path)
    if (typeof ref === 'string') return
    setLoadingOlder(true)
    void newestPathChanges(readerOf(ref), known.oldest - 1, PAGE).then(part => {
      setTimeline(t => t && t.path === known.path && t.oldest === known.oldest
        ? { ...t, entries: [...t.entries, ...[...part.changes].reverse()], oldest: part.from, expired: part.expired }
        : t)
    }, e => { setError(failure(e)) }).finally(() => { setLoadingOlder(false) })
  }

  return { timeline: timeline?.path === path ? timeline : null, error, loadingOlder, older }
}
