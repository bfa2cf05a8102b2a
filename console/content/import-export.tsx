// The content as a .json file: download it (everyone who can read it), or replace the content
// with a chosen file (editors and the owner), after a confirmation. The replacement is one
// whole-content update with If-Match on the version shown when confirmed; History keeps
// what it replaced.
import { useEffect, useId, useRef, useState } from 'preact/hooks'
import type { JsonObject } from '../../shared/client/index.js'
import { pretty } from '../json-text.js'
import { ErrorText } from '../ui.js'
import { ActionError, ConflictNote, useAction } from './conflict.js'
import { exportFileName, readImport } from './json-file.js'
import type { LiveDocument } from './live-document.js'

export function ImportExport ({ doc, canWrite }: { doc: LiveDocument, canWrite: boolean }) {
  const id = useId()
  const [chosen, setChosen] = useState<{ name: string, value: JsonObject } | null>(null)
  const [problem, setProblem] = useState<string | null>(null)
  const [done, setDone] = useState<string | null>(null)
  const action = useAction(doc)
  const input = useRef<HTMLInputElement>(null)
  const confirm = useRef<HTMLButtonElement>(null)
  useEffect(() => { if (chosen) confirm.current?.focus() }, [chosen])

  const download = () => {
    const url = URL.createObjectURL(new Blob([pretty(doc.content)], { type: 'application/json' }))
    const link = document.createElement('a')
    link.href = url
    link.download = exportFileName(doc.project.reference, doc.version)
    link.click()
    // After the click has started the download.
    setTimeout(() => URL.revokeObjectURL(url), 1000)
  }
  const choose = async (file: File | undefined) => {
    setProblem(null)
    setDone(null)
    setChosen(null)
    action.clear()
    if (!file) return
    const read = readImport(await file.text())
    if (!read.ok) { setProblem(`${file.name}: ${read.message}`); return }
    setChosen({ name: file.name, value: read.value })
  }
  const cancel = () => {
    setChosen(null)
    if (input.current) input.current.value = ''
  }
  const replace = async (version: number) => {
    if (!chosen) return
    if (await action.run({ op: 'update', value: chosen.value }, version)) {
      setDone(`The content is now ${chosen.name}.`)
      cancel()
    }
  }

  return (
    <section class="import-export" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`} class="visually-hidden">Import and export</h2>
      <div class="actions">
        <button type="button" class="button ghost" onClick={download}>Download .json</button>
        {canWrite && (
          <>
            <label for={`${id}-file`} class="file-label">Import a .json file</label>
            <input id={`${id}-file`} ref={input} type="file" accept=".json,application/json" onChange={e => { void choose(e.currentTarget.files?.[0]) }} />
          </>
        )}
      </div>
      <ErrorText message={problem} />
      {chosen && (
        <p class="confirm" role="group" aria-label={`Replace the content with ${chosen.name}?`}>
          <span class="confirm-question">Replace the whole content (v{doc.version ?? 0}) with {chosen.name}, {Object.keys(chosen.value).length} top-level keys? History keeps the current version.</span>
          <button type="button" ref={confirm} class="button small danger" disabled={action.busy} onClick={() => { void replace(doc.version ?? 0) }}>Replace</button>
          <button type="button" class="button small ghost" onClick={cancel}>Cancel</button>
        </p>
      )}
      <ActionError action={action} doc={doc} />
      {action.conflict && chosen && (
        <ConflictNote doc={doc} conflict={action.conflict} busy={action.busy} retryLabel={`Replace with ${chosen.name} anyway`}
          onRetry={() => { void replace(doc.version ?? 0) }} onDiscard={cancel} />
      )}
      {done && <p class="saved" role="status">{done}</p>}
    </section>
  )
}
