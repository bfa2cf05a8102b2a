// The Query tab (docs/queries.md): a live query's result, kept current as the content
// changes — a leaderboard's top ten, a chat's latest twenty. The form names the path and the
// query; the list shows the ordered children from the SDK's project.query(…).subscribe, and
// what the server refuses (INVALID_QUERY, KEY_SCOPE_DENIED, …) shows under the form.
import { useEffect, useId, useState } from 'preact/hooks'
import type { QueryInput, QueryItem } from '../../shared/client/index.js'
import { useApp } from '../app-context.js'
import type { LiveDocument } from '../content/live-document.js'
import { ErrorText, valueOf } from '../ui.js'

interface Asked { path: string, query: QueryInput }

/** A bound as typed: empty is none, JSON when it parses (10, true, "b"), else the text itself. */
function boundOf (text: string): string | number | boolean | null | undefined {
  if (text.trim() === '') return undefined
  try {
    const value: unknown = JSON.parse(text)
    if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) return value as string | number | boolean | null
  } catch { /* plain text: a string bound */ }
  return text
}

export function QueryPanel ({ doc }: { doc: LiveDocument }) {
  const { failure } = useApp()
  const id = useId()
  const [path, setPath] = useState('')
  const [orderBy, setOrderBy] = useState('key')
  const [direction, setDirection] = useState<'asc' | 'desc'>('asc')
  const [limit, setLimit] = useState('10')
  const [startAt, setStartAt] = useState('')
  const [endAt, setEndAt] = useState('')
  const [asked, setAsked] = useState<Asked | null>(null)
  const [items, setItems] = useState<QueryItem[] | null>(null)
  const [version, setVersion] = useState<number | null>(null)
  const [problem, setProblem] = useState<string | null>(null)

  useEffect(() => {
    if (!asked) return
    setItems(null)
    setProblem(null)
    const subscription = doc.project.query(asked.path, asked.query).subscribe((next, at) => {
      setItems([...next])
      setVersion(at)
    }, { onError: e => setProblem(failure(e)) })
    return () => subscription.close()
  }, [asked, doc, failure])

  const submit = (event: Event) => {
    event.preventDefault()
    const query: QueryInput = { orderBy: orderBy.trim(), direction, limit: Number(limit) }
    const start = boundOf(startAt)
    const end = boundOf(endAt)
    if (start !== undefined) query.startAt = start
    if (end !== undefined) query.endAt = end
    setAsked({ path: path.trim(), query })
  }

  return (
    <section class="query-panel" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Live query</h2>
      <p class="hint">The children of an object or array, ordered and limited, kept live: try path <code>leaderboard</code>, order by <code>score</code>, descending, limit 10.</p>
      <form class="query-form" onSubmit={submit}>
        <label>Path <input name="path" required value={path} onInput={e => setPath(valueOf(e))} placeholder="leaderboard" /></label>
        <label>Order by <input name="orderBy" required value={orderBy} onInput={e => setOrderBy(valueOf(e))} placeholder="key, value or a child path" /></label>
        <label>Direction
          <select name="direction" value={direction} onChange={e => setDirection((e.currentTarget as HTMLSelectElement).value === 'desc' ? 'desc' : 'asc')}>
            <option value="asc">ascending</option>
            <option value="desc">descending</option>
          </select>
        </label>
        <label>Limit <input name="limit" type="number" min={1} max={1000} required value={limit} onInput={e => setLimit(valueOf(e))} /></label>
        <label>Start at <input name="startAt" value={startAt} onInput={e => setStartAt(valueOf(e))} placeholder="optional" /></label>
        <label>End at <input name="endAt" value={endAt} onInput={e => setEndAt(valueOf(e))} placeholder="optional" /></label>
        <button type="submit" class="button primary">Run live</button>
      </form>
      <ErrorText message={problem} />
      {asked && !problem && items === null && <p class="hint">Waiting for the result…</p>}
      {asked && items !== null && (
        <div class="query-result">
          <p class="hint" role="status">{items.length === 0 ? 'No children match.' : `${items.length} ${items.length === 1 ? 'child' : 'children'}`}{version !== null ? ` · v${version}` : ''}</p>
          <ol class="query-items" aria-label="Query result">
            {items.map(item => (
              <li key={item.key}><code class="query-key">{item.key}</code> <code class="query-value">{JSON.stringify(item.value)}</code></li>
            ))}
          </ol>
        </div>
      )}
    </section>
  )
}
