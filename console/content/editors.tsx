// The forms of the tree: a value editor (in place of a value), and the form that adds a key
// to an object or an item to an array. Enter saves, Escape cancels.
import { useEffect, useId, useRef, useState } from 'preact/hooks'
import type { Json } from '../../shared/client/index.js'
import { ErrorText, valueOf } from '../ui.js'
import { newKeyProblem } from './edits.js'
import { kindOf, parseValue, textOf, VALUE_KINDS, type ValueKind } from './value-input.js'

/** A kind select and the input that fits it; reports the parsed value (or the problem). */
function ValueField ({ id, label, kind, text, onKind, onText, problem, autoFocus }: {
  id: string
  label: string
  kind: ValueKind
  text: string
  onKind: (kind: ValueKind) => void
  onText: (text: string) => void
  problem: string | null
  autoFocus?: boolean
}) {
  const input = useRef<HTMLInputElement & HTMLTextAreaElement & HTMLSelectElement>(null)
  useEffect(() => { if (autoFocus) { input.current?.focus(); input.current?.select?.() } }, [])
  return (
    <div class="value-field">
      <select aria-label={`Type of ${label}`} value={kind} onChange={e => onKind(valueOf(e) as ValueKind)}>
        {VALUE_KINDS.map(k => <option key={k.kind} value={k.kind}>{k.label}</option>)}
      </select>
      {kind === 'boolean' && (
        <select id={id} ref={input} aria-label={label} value={text} onChange={e => onText(valueOf(e))}>
          <option value="true">true</option>
          <option value="false">false</option>
        </select>
      )}
      {(kind === 'string' || kind === 'number') && (
        <input id={id} ref={input} aria-label={label} class="mono" value={text} inputMode={kind === 'number' ? 'decimal' : undefined}
          onInput={e => onText(valueOf(e))} aria-invalid={problem ? true : undefined} aria-describedby={problem ? `${id}-problem` : undefined}
          autocomplete="off" spellcheck={false} />
      )}
      {kind === 'json' && (
        <textarea id={id} ref={input} aria-label={label} class="mono" rows={Math.min(12, Math.max(3, text.split('\n').length))} value={text}
          onInput={e => onText(valueOf(e))} aria-invalid={problem ? true : undefined} aria-describedby={problem ? `${id}-problem` : undefined} spellcheck={false} />
      )}
      {kind === 'null' && <span class="null-note">null</span>}
      <ErrorText id={`${id}-problem`} message={problem} />
    </div>
  )
}

/** Edits one value in place: a scalar, or any value replaced as JSON. */
export function ValueEditor ({ path, value, busy, onSave, onCancel }: {
  path: string
  value: Json
  busy: boolean
  onSave: (value: Json) => void
  onCancel: () => void
}) {
  const id = useId()
  const [kind, setKind] = useState<ValueKind>(kindOf(value))
  const [text, setText] = useState(textOf(value, kindOf(value)))
  const [problem, setProblem] = useState<string | null>(null)
  const changeKind = (next: ValueKind) => { setKind(next); setText(textOf(value, next)); setProblem(null) }
  const submit = (event: Event) => {
    event.preventDefault()
    const parsed = parseValue(kind, text)
    if (!parsed.ok) { setProblem(parsed.message); return }
    onSave(parsed.value)
  }
  return (
    <form class="inline-editor" onSubmit={submit} onKeyDown={e => { if (e.key === 'Escape') { e.preventDefault(); onCancel() } }}>
      <ValueField id={id} label={`new value of ${path}`} kind={kind} text={text} onKind={changeKind} onText={t => { setText(t); setProblem(null) }} problem={problem} autoFocus />
      <div class="editor-buttons">
        <button type="submit" class="button primary small" disabled={busy}>{busy ? 'Saving…' : 'Save'}</button>
        <button type="button" class="button ghost small" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  )
}

export type Addition = { kind: 'key', key: string, value: Json } | { kind: 'push', value: Json } | { kind: 'insert', index: number, value: Json }

/** Adds a key to an object, or an item to an array (at the end: push; at a position: insert). */
export function AddForm ({ path, container, busy, onAdd, onCancel }: {
  path: string
  container: Json[] | { [key: string]: Json }
  busy: boolean
  onAdd: (addition: Addition) => void
  onCancel: () => void
}) {
  const id = useId()
  const isArray = Array.isArray(container)
  const where = path === '' ? 'the content' : path
  const [key, setKey] = useState('')
  const [keyError, setKeyError] = useState<string | null>(null)
  const [position, setPosition] = useState<'end' | 'index'>('end')
  const [index, setIndex] = useState('0')
  const [indexError, setIndexError] = useState<string | null>(null)
  const [kind, setKind] = useState<ValueKind>('string')
  const [text, setText] = useState('')
  const [problem, setProblem] = useState<string | null>(null)
  const keyInput = useRef<HTMLInputElement>(null)
  const positionSelect = useRef<HTMLSelectElement>(null)
  useEffect(() => { (isArray ? positionSelect.current : keyInput.current)?.focus() }, [])

  const submit = (event: Event) => {
    event.preventDefault()
    const parsed = parseValue(kind, text)
    setProblem(parsed.ok ? null : parsed.message)
    if (isArray) {
      const at = Number(index)
      const badIndex = position === 'index' && (!Number.isInteger(at) || at < 0 || at > container.length) ? `Choose a position from 0 to ${container.length}` : null
      setIndexError(badIndex)
      if (!parsed.ok || badIndex) return
      onAdd(position === 'end' ? { kind: 'push', value: parsed.value } : { kind: 'insert', index: at, value: parsed.value })
      return
    }
    const exists = Object.prototype.hasOwnProperty.call(container, key) ? `${where} already has "${key}": edit that value instead` : null
    const badKey = newKeyProblem(key) ?? exists
    setKeyError(badKey)
    if (!parsed.ok || badKey) return
    onAdd({ kind: 'key', key, value: parsed.value })
  }

  return (
    <form class="add-form" onSubmit={submit} onKeyDown={e => { if (e.key === 'Escape') { e.preventDefault(); onCancel() } }}
      aria-label={isArray ? `Add an item to ${where}` : `Add a key to ${where}`}>
      {!isArray && (
        <div class="add-field">
          <label for={`${id}-key`}>Key</label>
          <input id={`${id}-key`} ref={keyInput} class="mono" value={key} onInput={e => { setKey(valueOf(e)); setKeyError(null) }}
            autocomplete="off" spellcheck={false} aria-invalid={keyError ? true : undefined} aria-describedby={keyError ? `${id}-key-error` : undefined} />
          <ErrorText id={`${id}-key-error`} message={keyError} />
        </div>
      )}
      {isArray && (
        <div class="add-field">
          <label for={`${id}-position`}>Position</label>
          <div class="input-row">
            <select id={`${id}-position`} ref={positionSelect} value={position} onChange={e => setPosition(valueOf(e) as 'end' | 'index')}>
              <option value="end">At the end (push)</option>
              <option value="index">At a position (insert)</option>
            </select>
            {position === 'index' && (
              <input aria-label="Index" type="number" min={0} max={container.length} step={1} class="index-input" value={index}
                onInput={e => { setIndex(valueOf(e)); setIndexError(null) }} aria-invalid={indexError ? true : undefined} />
            )}
          </div>
          <ErrorText message={indexError} />
        </div>
      )}
      <div class="add-field grow">
        <span class="field-label" id={`${id}-value-label`}>Value</span>
        <ValueField id={`${id}-value`} label={isArray ? `value of the new item in ${where}` : 'value of the new key'} kind={kind} text={text}
          onKind={k => { setKind(k); setText(textOf(null, k)); setProblem(null) }} onText={t => { setText(t); setProblem(null) }} problem={problem} />
      </div>
      <div class="editor-buttons">
        <button type="submit" class="button primary small" disabled={busy}>{busy ? 'Adding…' : isArray ? 'Add item' : 'Add key'}</button>
        <button type="button" class="button ghost small" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  )
}
