// Sending an edit, and what the user sees when it fails: an error next to the edited node,
// or, for a 412, what changed since they started and a way to send their edit again on top
// of the latest version.
import { useEffect, useState } from 'preact/hooks'
import { ContentdError, type Json, type SchemaError } from '../../shared/client/index.js'
import { useApp } from '../app-context.js'
import { hrefOf } from '../route.js'
import { SchemaErrorList } from '../schema-errors.js'
import { ErrorText, Time } from '../ui.js'
import { describeEdit, isConflict, sendEdit, valueAt, type Edit } from './edits.js'
import type { LiveDocument } from './live-document.js'
import { preview } from './value-input.js'

export interface Conflict {
  edit: Edit
  /** The version the edit was based on. */
  baseVersion: number
  /** The edited path (null for the whole content) and its value when the user started. */
  path: string | null
  before: Json | undefined
}

export interface Action {
  busy: boolean
  error: string | null
  /** With a 422 SCHEMA_VIOLATION: how the edit would break the project's schema. */
  violations: SchemaError[] | null
  conflict: Conflict | null
  /** Sends `edit` with If-Match on `baseVersion`; resolves true when it was applied. */
  run (edit: Edit, baseVersion: number, before?: Json): Promise<boolean>
  /** Sends the conflicting edit again, on the latest version. */
  retry (): Promise<boolean>
  clear (): void
}

export function useAction (doc: LiveDocument): Action {
  const { failure, announce } = useApp()
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const [conflict, setConflict] = useState<Conflict | null>(null)
  const [violations, setViolations] = useState<SchemaError[] | null>(null)

  const run = async (edit: Edit, baseVersion: number, before?: Json): Promise<boolean> => {
    setBusy(true)
    setError(null)
    setViolations(null)
    try {
      await sendEdit(doc.project, edit, baseVersion)
      setConflict(null)
      announce(`Saved: ${describeEdit(edit)}.`)
      return true
    } catch (e) {
      if (isConflict(e)) setConflict({ edit, baseVersion, path: edit.op === 'update' ? null : edit.path, before })
      else setError(failure(e))
      if (e instanceof ContentdError && e.code === 'SCHEMA_VIOLATION') setViolations(e.errors ?? [])
      return false
    } finally {
      setBusy(false)
    }
  }
  return {
    busy,
    error,
    violations,
    conflict,
    run,
    retry: async () => conflict ? run(conflict.edit, doc.version ?? conflict.baseVersion, conflict.before) : false,
    clear: () => { setError(null); setViolations(null); setConflict(null) }
  }
}

/**
 * Why an edit was not applied, next to it: the server's message and, when the project's
 * schema refused it, where, with a link to the schema.
 */
export function ActionError ({ action, doc }: { action: Action, doc: LiveDocument }) {
  if (!action.error) return null
  if (!action.violations) return <ErrorText message={action.error} />
  return (
    <div class="field-error schema-refusal" role="alert">
      <p>{action.error}</p>
      <SchemaErrorList errors={action.violations} />
      <p><a href={hrefOf({ page: 'project', project: doc.project.reference, tab: 'schema' })}>The project's schema</a> decides what the content may hold.</p>
    </div>
  )
}

/** What changed between the edit's base version and now, and the choice to retry or discard. */
export function ConflictNote ({ doc, conflict, busy, onRetry, onDiscard, retryLabel = 'Apply my edit to the latest version' }: {
  doc: LiveDocument
  conflict: Conflict
  busy: boolean
  onRetry: () => void
  onDiscard: () => void
  retryLabel?: string
}) {
  // The note follows the live content while it is open.
  const [, setFrame] = useState(0)
  useEffect(() => doc.onUpdate(() => setFrame(n => n + 1)), [doc])
  const changes = doc.changesSince(conflict.baseVersion)
  const now = conflict.path === null ? undefined : valueAt(doc.content, conflict.path)
  return (
    <div class="conflict" role="alert">
      <p class="conflict-title"><strong>Not saved: the content changed while you were editing.</strong></p>
      <p>You started at version {conflict.baseVersion}; it is now at version {doc.version}. Your edit — {describeEdit(conflict.edit)} — was not applied.</p>
      {conflict.path !== null && (
        <dl class="conflict-values">
          <dt>{conflict.path} when you started</dt><dd class="mono">{conflict.before === undefined ? '(absent)' : preview(conflict.before, 120)}</dd>
          <dt>{conflict.path} now</dt><dd class="mono">{now === undefined ? '(absent)' : preview(now, 120)}</dd>
        </dl>
      )}
      {changes.length > 0 && (
        <details class="conflict-changes" open={changes.length <= 5}>
          <summary>{changes.length} change{changes.length === 1 ? '' : 's'} since version {conflict.baseVersion}</summary>
          <ol>
            {changes.slice(-20).map(change => (
              <li key={change.version}>
                <span class="mono">v{change.version}</span> <strong>{change.op}</strong> <span class="mono">{change.path ?? '(whole content)'}</span>
                {change.value !== undefined && change.op !== 'update' && <span class="mono"> = {preview(change.value, 60)}</span>} · <Time iso={change.at} />
              </li>
            ))}
          </ol>
        </details>
      )}
      <div class="actions">
        <button type="button" class="button primary small" disabled={busy} onClick={onRetry}>{busy ? 'Saving…' : retryLabel}</button>
        <button type="button" class="button ghost small" onClick={onDiscard}>Discard my edit</button>
      </div>
    </div>
  )
}
