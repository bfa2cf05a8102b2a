// The Schema tab (owner; docs/schema.md): the project's JSON Schema as text, edited and saved
// with the SDK (getSchema, setSchema, deleteSchema). What the server refuses shows at the
// text: INVALID_SCHEMA (400) with its message, SCHEMA_VIOLATION (409: the content breaks the
// schema, nothing stored) with each path that breaks it. Nothing is stored until the server
// accepts the schema, and the text is never replaced while the owner edits it.
import { useEffect, useId, useRef, useState } from 'preact/hooks'
import { ContentdError, type JsonSchema, type ProjectClient, type SchemaError, type SchemaSet } from '../../shared/client/index.js'
import { useApp } from '../app-context.js'
import type { LiveDocument } from '../content/live-document.js'
import { pretty } from '../json-text.js'
import { SchemaErrorList } from '../schema-errors.js'
import { CodeEditor } from '../editor/code-editor.js'
import { ConfirmButton, EmptyState, ErrorText, Loading, Time, whileBusy } from '../ui.js'
import { parseSchemaText, starterSchema } from './schema-text.js'

/** The stored schema: none, or the one the server has (and, after a save here, who set it when). */
type Stored = { schema: JsonSchema | null, set: SchemaSet | null }

/**
 * The stored schema, read only when the project says it has one (GET project's hasSchema), so
 * the page makes no request that answers 404. One removed meanwhile still reads as none.
 */
export async function readSchema (project: ProjectClient, hasSchema: boolean): Promise<JsonSchema | null> {
  if (!hasSchema) return null
  try {
    return await project.getSchema()
  } catch (e) {
    if (e instanceof ContentdError && e.code === 'SCHEMA_NOT_FOUND') return null
    throw e
  }
}

export function SchemaPanel ({ doc, hasSchema, onSchema }: { doc: LiveDocument, hasSchema: boolean, onSchema: (hasSchema: boolean) => void }) {
  const { failure, announce } = useApp()
  const project = doc.project
  const id = useId()
  const area = useRef<{ focus (): void } | null>(null)
  const [stored, setStored] = useState<Stored | null>(null)
  const [loadError, setLoadError] = useState<string | null>(null)
  /** The text being edited; null while the owner has not started one (no schema yet). */
  const [text, setText] = useState<string | null>(null)
  const [problem, setProblem] = useState<string | null>(null)
  const [violations, setViolations] = useState<SchemaError[] | null>(null)
  const [busy, setBusy] = useState(false)
  const [saved, setSaved] = useState(false)

  useEffect(() => {
    let alive = true
    readSchema(project, hasSchema).then(schema => {
      if (!alive) return
      setStored({ schema, set: null })
      setText(schema === null ? null : pretty(schema))
    }, e => { if (alive) setLoadError(failure(e)) })
    return () => { alive = false }
    // Read once per visit of the tab: hasSchema changing by this panel's own save is no reason to read again.
  }, [project, failure])

  if (loadError) return <ErrorText message={loadError} />
  if (!stored) return <Loading what="the schema" />

  const showProblem = (message: string, errors: SchemaError[] | null = null) => {
    setProblem(message)
    setViolations(errors)
    area.current?.focus()
  }
  const clearProblem = () => {
    setProblem(null)
    setViolations(null)
  }
  const save = async () => {
    if (text === null) return
    setSaved(false)
    const parsed = parseSchemaText(text)
    if (!parsed.ok) { showProblem(parsed.message); return }
    await whileBusy(setBusy, clearProblem, async () => {
      const set = await project.setSchema(parsed.schema)
      setStored({ schema: parsed.schema, set })
      setText(pretty(parsed.schema))
      setSaved(true)
      onSchema(true)
      announce('Schema saved: every write is checked against it from now on.')
    }, e => {
      const errors = e instanceof ContentdError && e.code === 'SCHEMA_VIOLATION' ? e.errors ?? [] : null
      showProblem(failure(e), errors)
    })
  }
  const remove = () => whileBusy(setBusy, clearProblem, async () => {
    await project.deleteSchema()
    setStored({ schema: null, set: null })
    setText(null)
    setSaved(false)
    onSchema(false)
    announce('Schema removed: writes are no longer checked.')
  }, e => showProblem(failure(e)))
  const format = () => {
    if (text === null) return
    const parsed = parseSchemaText(text)
    if (!parsed.ok) { showProblem(parsed.message); return }
    setProblem(null)
    setText(pretty(parsed.schema))
  }
  const discard = () => {
    setText(stored.schema === null ? null : pretty(stored.schema))
    setProblem(null)
    setViolations(null)
    setSaved(false)
  }
  const dirty = text !== null && (stored.schema === null || text !== pretty(stored.schema))

  if (text === null) {
    return (
      <EmptyState title="No schema yet: every write is accepted" icon="{ }"
        actions={<button type="button" class="button primary" onClick={() => setText(pretty(starterSchema(doc.content)))}>Write a schema</button>}>
        <p>A JSON Schema (draft 2020-12) guards the content: once it is set, a write whose result does not match it is refused with the reason, and nothing changes.
          The first draft starts from the keys the content has now. <a href="/docs" target="_blank" rel="noopener">API reference</a></p>
      </EmptyState>
    )
  }

  return (
    <section class="panel schema-editor" aria-labelledby="schema-title">
      <div class="panel-head">
        <h2 id="schema-title">JSON Schema</h2>
        <p class="hint schema-state" role="status">
          {stored.schema === null
            ? 'Not saved yet: every write is accepted.'
            : stored.set
              ? <>In force, set by {stored.set.setBy} <Time iso={stored.set.setAt} />.</>
              : 'In force: every write is checked against it.'}
        </p>
      </div>
      <p class="hint">Draft 2020-12, self-contained ($ref inside the schema only). Setting it changes neither the content nor its version; if the content does not match it, nothing is stored.</p>
      <CodeEditor id={`${id}-schema`} label="Schema as JSON" mode="schema" handle={area} text={text} rows={10}
        invalid={problem !== null} describedBy={problem ? `${id}-problem` : undefined}
        onChange={next => { setText(next); setSaved(false); setProblem(null); setViolations(null) }} />
      {problem && (
        <div id={`${id}-problem`} class="field-error schema-problem" role="alert">
          <p>{problem}</p>
          {violations && <SchemaErrorList errors={violations} />}
        </div>
      )}
      <div class="actions">
        <button type="button" class="button primary" disabled={busy || !dirty} onClick={() => { void save() }}>{busy ? 'Saving…' : 'Save schema'}</button>
        <button type="button" class="button ghost" onClick={format}>Format</button>
        {dirty && <button type="button" class="button ghost" onClick={discard}>{stored.schema === null ? 'Cancel' : 'Revert my changes'}</button>}
        {saved && <span class="saved" role="status">Saved.</span>}
        {stored.schema !== null && (
          <ConfirmButton label="Remove the schema" confirmLabel="Remove" busy={busy} onConfirm={() => { void remove() }}
            question="Remove the schema? Writes are no longer checked; the content stays as it is.">
            Remove the schema
          </ConfirmButton>
        )}
      </div>
    </section>
  )
}
