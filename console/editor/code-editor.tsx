// A JSON editor for the JSON tab and the Schema tab: CodeMirror 6 (setup.ts), fetched with
// import() the first time an editor shows, so the first page stays light (docs/console.md,
// "Editors"). Until it has loaded, and if it cannot load, the same text is a plain text box.
import { useEffect, useRef, useState } from 'preact/hooks'
import type { JsonSchema } from '../../shared/client/index.js'
import { valueOf } from '../ui.js'
import type { EditorHandle, PlacedProblem } from './setup.js'

export interface CodeEditorProps {
  id: string
  label: string
  text: string
  onChange: (text: string) => void
  readOnly?: boolean
  invalid?: boolean
  describedBy?: string | undefined
  mode: 'content' | 'schema'
  schema?: JsonSchema | null
  /** A refusal marked at its place in the text (CodeMirror only; the message is also said under the editor). */
  problemAt?: PlacedProblem | null
  /** Set to the editor while it is mounted: focus() for an error. */
  handle?: { current: { focus (): void } | null }
  rows?: number
}

let loading: Promise<typeof import('./setup.js')> | null = null
/** The editor's module, fetched once per page. */
export function loadEditor (): Promise<typeof import('./setup.js')> {
  loading ??= import('./setup.js')
  return loading
}

export function CodeEditor (props: CodeEditorProps) {
  const { id, label, text, onChange, readOnly = false, invalid = false, describedBy, mode, schema = null, problemAt = null, handle, rows = 12 } = props
  const host = useRef<HTMLDivElement>(null)
  const editor = useRef<EditorHandle | null>(null)
  const area = useRef<HTMLTextAreaElement>(null)
  const change = useRef(onChange)
  change.current = onChange
  const [state, setState] = useState<'loading' | 'ready' | 'failed'>('loading')

  useEffect(() => {
    let alive = true
    loadEditor().then(module => {
      if (!alive || !host.current) return
      editor.current = module.createEditor(host.current, { label, text, readOnly, mode, schema, onChange: next => change.current(next) })
      setState('ready')
    }, () => { if (alive) setState('failed') })
    return () => {
      alive = false
      editor.current?.destroy()
      editor.current = null
    }
    // The editor is made once; the effects below carry later changes into it.
  }, [])

  useEffect(() => { editor.current?.setText(text) }, [text, state])
  useEffect(() => { editor.current?.setReadOnly(readOnly) }, [readOnly, state])
  useEffect(() => { editor.current?.setInvalid(invalid, describedBy) }, [invalid, describedBy, state])
  useEffect(() => { editor.current?.setSchema(schema) }, [schema, state])
  useEffect(() => { editor.current?.setProblem(problemAt) }, [problemAt, state])
  useEffect(() => {
    if (!handle) return
    handle.current = { focus: () => { if (editor.current) editor.current.focus(); else area.current?.focus() } }
    return () => { handle.current = null }
  }, [handle])

  return (
    <div class="code-editor" data-state={state}>
      <div ref={host} id={id} class="code-editor-host" />
      {state !== 'ready' && (
        <textarea ref={area} class="mono json-area" aria-label={label} value={text} readOnly={readOnly} spellcheck={false}
          rows={Math.min(30, Math.max(rows, text.split('\n', 31).length))}
          aria-invalid={invalid ? true : undefined} aria-describedby={describedBy}
          onInput={e => onChange(valueOf(e))} />
      )}
    </div>
  )
}
