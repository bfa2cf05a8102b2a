// Watching one path (docs/console.md#watch-a-path): chosen from a tree row's menu, a small
// panel shows the live value at the path through the SDK's `project.ref(path).subscribe()`
// (a path subscription, docs/design.md §15: only the changes that touch the path reach the
// page) and the recent changes that touched it, the older of them read from the server's
// `changes?path=`. It may watch as the signed-in user or as a key made in this tab that may
// read the path — a key narrowed to that path included — to see what an app holding that key
// sees.
import { useEffect, useRef, useState } from 'preact/hooks'
import { createClient, type ContentdClient, type Json, type PathChange, type ProjectClient } from '../../shared/client/index.js'
import { useApp } from '../app-context.js'
import { actorName, entryTarget } from '../panels/history-text.js'
import { messageOf } from '../session.js'
import { Badge, ErrorText, Time, valueOf } from '../ui.js'
import { newestPathChanges, watchingKeys } from './path-history.js'
import { preview } from './value-input.js'

/** Paths watched at once (each is a subscription, counted by the server's per-connection limit). */
export const MOST_WATCHES = 5
/** Recent changes shown per watch. */
const RECENT = 10
/** The value's text is cut past this many characters. */
const SHOWN_CHARS = 4000

interface Watched {
  /** undefined: nothing at the path. */
  value: Json | undefined
  version: number
}

export function PathWatches ({ project, paths, onStop }: { project: ProjectClient, paths: string[], onStop: (path: string) => void }) {
  if (paths.length === 0) return null
  return (
    <div class="watches">
      {paths.map(path => <PathWatch key={path} project={project} path={path} onStop={() => onStop(path)} />)}
    </div>
  )
}

function PathWatch ({ project, path, onStop }: { project: ProjectClient, path: string, onStop: () => void }) {
  const { createdKeys, session, failure } = useApp()
  const keys = watchingKeys(createdKeys, project.reference, path)
  /** '' : as the signed-in user; else the id of the key watched with. */
  const [as, setAs] = useState('')
  const [watched, setWatched] = useState<Watched | null>(null)
  const [recent, setRecent] = useState<PathChange[]>([])
  const [error, setError] = useState<string | null>(null)
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => { heading.current?.focus() }, [])

  const key = keys.find(k => k.id === as)
  useEffect(() => {
    setWatched(null)
    setRecent([])
    setError(null)
    let alive = true
    // A key's own client: what an app holding the key would see. Its failures never sign the user out.
    let own: ContentdClient | undefined
    const target = key ? (own = createClient({ baseUrl: location.origin, token: key.key })).project(project.reference) : project
    const fail = (e: unknown) => { if (alive) setError(key ? messageOf(e) : failure(e)) }
    const ref = target.ref(path)
    const subscription = ref.subscribe((value, version) => {
      if (alive) setWatched({ value, version })
    }, {
      onChange: change => { if (alive) setRecent(r => [change, ...r.filter(c => c.version !== change.version)].slice(0, RECENT)) },
      onError: fail
    })
    // The changes before the first value, from the path's history on the server.
    subscription.ready.then(async () => {
      const part = await newestPathChanges(options => ref.changes(options), subscription.version ?? 0, RECENT)
      if (!alive) return
      setRecent(r => [...r, ...[...part.changes].reverse().filter(c => !r.some(n => n.version === c.version))].slice(0, RECENT))
    }).catch(fail)
    return () => {
      alive = false
      subscription.close()
      void own?.close()
    }
  }, [project, path, key?.id])

  const text = watched === null || watched.value === undefined ? '' : JSON.stringify(watched.value, null, 2)
  const id = `watch-${path.replace(/[^A-Za-z0-9_-]/g, '_')}`
  return (
    <section class="panel watch-panel" aria-labelledby={`${id}-title`} data-watch={path}>
      <div class="panel-head">
        <h2 id={`${id}-title`} ref={heading} tabIndex={-1}>Watching <code>{path}</code></h2>
        <button type="button" class="button ghost small" onClick={onStop}>Stop watching<span class="visually-hidden"> {path}</span></button>
      </div>
      {keys.length > 0 && (
        <div class="field watch-as">
          <label for={`${id}-as`}>Watch as</label>
          <select id={`${id}-as`} value={as} onChange={e => setAs(valueOf(e))}>
            <option value="">{session.username} (you)</option>
            {keys.map(k => <option key={k.id} value={k.id}>key {k.name}{k.paths ? ` (paths ${k.paths.join(', ')})` : ''}</option>)}
          </select>
        </div>
      )}
      <ErrorText message={error} />
      {watched === null && !error && <p class="hint">Connecting…</p>}
      {watched !== null && (
        <>
          <p class="watch-meta">
            <span class="watch-version mono">v{watched.version}</span> · live{key ? ` as key ${key.name}` : ''}
          </p>
          {watched.value === undefined
            ? <p class="watch-value watch-absent">Nothing is at this path (yet): it appears here when something is written there.</p>
            : <pre class="watch-value mono" tabIndex={0} aria-label={`Value of ${path}`}>{text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS - 1)}…` : text}</pre>}
        </>
      )}
      <h3 class="watch-recent-title">Recent changes to {path}</h3>
      {recent.length === 0
        ? <p class="hint">{watched === null ? '' : 'None yet.'}</p>
        : (
          <ol class="timeline watch-recent" aria-label={`Recent changes to ${path}, newest first`}>
            {recent.map(change => (
              <li key={change.version} class="change" data-version={change.version}>
                <span class="change-version mono">v{change.version}</span>
                <span class="change-what">
                  <Badge>{change.op}</Badge>
                  <span class="mono change-path">{entryTarget(change)}</span>
                  {change.value !== undefined && change.op !== 'update' && change.op !== 'revert' && <span class="mono change-value">{preview(change.value, 60)}</span>}
                  {'projected' in change && <span class="change-projected" title="A change above this path or of the whole content, shown as what the path became">(what the path became)</span>}
                </span>
                <span class="change-who"><span class="change-actor">{actorName(change.actor)}</span> · <Time iso={change.at} /></span>
              </li>
            ))}
          </ol>
          )}
    </section>
  )
}
