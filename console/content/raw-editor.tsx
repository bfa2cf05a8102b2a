// The whole document as JSON text: read it, or edit it and save it as one update (with
// If-Match on the version it was loaded at). The text does not follow live changes while
// it is open (it would overwrite what the user types); a banner says when it is behind.
import { useEffect, useId, useRef, useState } from 'preact/hooks'
import type { JsonObject, JsonSchema } from '../../shared/client/index.js'
import { CodeEditor } from '../editor/code-editor.js'
import { isJsonObject, parseJsonText, pretty } from '../json-text.js'
import { readSchema } from '../panels/schema-panel.js'
import { ErrorText } from '../ui.js'
import { ActionError, ConflictNote, useAction } from './conflict.js'
import { ImportExport } from './import-export.js'
import type { LiveDocument } from './live-document.js'

/** Above this many characters the text stops following live changes by itself. */
const FOLLOW_LIMIT = 200_000

/**
 * `schemaReadable`: the project has a schema and the user may read it (the owner), so the text
 * gets its hints; read once when the tab opens (no request at all otherwise, so no 404).
 */
export function RawEditor ({ doc, canWrite, schemaReadable }: { doc: LiveDocument, canWrite: boolean, schemaReadable: boolean }) {
  const id = useId()
  const [text, setText] = useState(() => pretty(doc.content))
  const [baseVersion, setBaseVersion] = useState(doc.version ?? 0)
  const [dirty, setDirty] = useState(false)
  const [problem, setProblem] = useState<string | null>(null)
  const [saved, setSaved] = useState(false)
  const action = useAction(doc)
  const [schema, setSchema] = useState<JsonSchema | null>(null)
  useEffect(() => {
    let alive = true
    // Only hints: without the schema the editor still edits, and the server still checks.
    readSchema(doc.project, schemaReadable).then(found => { if (alive) setSchema(found) }, () => {})
    return () => { alive = false }
  }, [doc, schemaReadable])
  const area = useRef<{ focus (): void } | null>(null)
  const [, setFrame] = useState(0)
  useEffect(() => doc.onUpdate(() => setFrame(n => n + 1)), [doc])

  // Untouched text follows the live content, unless it is too big to re-print every frame.
  const follows = !dirty && text.length < FOLLOW_LIMIT
  useEffect(() => {
    if (follows && doc.version !== baseVersion) {
      setText(pretty(doc.content))
      setBaseVersion(doc.version ?? 0)
    }
  })

  const parse = (): JsonObject | null => {
    const parsed = parseJsonText(text)
    if (!parsed.ok) { setProblem(parsed.message); return null }
    if (!isJsonObject(parsed.value)) {
      setProblem('The content must be a JSON object: { … }')
      return null
    }
    return parsed.value
  }
  const save = async (version: number) => {
    setSaved(false)
    const value = parse()
    if (!value) { area.current?.focus(); return }
    setProblem(null)
    if (await action.run({ op: 'update', value }, version)) {
      setDirty(false)
      setSaved(true)
    }
  }
  const reload = () => {
    setText(pretty(doc.content))
    setBaseVersion(doc.version ?? 0)
    setDirty(false)
    setProblem(null)
    setSaved(false)
    action.clear()
  }
  const format = () => {
    const value = parse()
    if (value) { setProblem(null); setText(pretty(value)) }
  }
  const behind = !follows && doc.version !== baseVersion

  return (
    <div class="raw-editor">
      {behind && !action.conflict && (
        <p class="banner banner-warn" role="status">
          {dirty
            ? `The content changed since you started editing (version ${baseVersion} → ${doc.version ?? ''}). Saving will show you what changed first.`
            : `A newer version is available (${doc.version ?? ''}).`}
          <button type="button" class="button small ghost" onClick={reload}>{dirty ? 'Discard my text and load the latest' : 'Load the latest'}</button>
        </p>
      )}
      <CodeEditor id={`${id}-json`} label="Content as JSON" mode="content" schema={schema} handle={area} text={text} readOnly={!canWrite} rows={8}
        invalid={problem !== null} describedBy={problem ? `${id}-problem` : undefined}
        onChange={next => { setText(next); setDirty(true); setSaved(false); setProblem(null) }} />
      <ErrorText id={`${id}-problem`} message={problem} />
      <ActionError action={action} doc={doc} />
      {action.conflict && (
        <ConflictNote doc={doc} conflict={action.conflict} busy={action.busy} retryLabel="Save my text over the latest version"
          onRetry={() => { void save(doc.version ?? 0) }} onDiscard={reload} />
      )}
      {canWrite && (
        <div class="actions">
          <button type="button" class="button primary" disabled={action.busy || !dirty} onClick={() => { void save(baseVersion) }}>{action.busy ? 'Saving…' : 'Save document'}</button>
          <button type="button" class="button ghost" onClick={format}>Format</button>
          {dirty && <button type="button" class="button ghost" onClick={reload}>Revert my changes</button>}
          {saved && <span class="saved" role="status">Saved.</span>}
        </div>
      )}
      <ImportExport doc={doc} canWrite={canWrite} />
    </div>
  )
}
