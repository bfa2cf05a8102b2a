// The Rules tab (owner; docs/rules.md, docs/console.md#rules): which app sign-in the project
// trusts (trust-panel.tsx), its rules document as text (saved with setRules, removed with
// deleteRules; INVALID_RULES shows its rule and CEL error at the text), and the simulator
// (rules-simulator.tsx), which asks the server as the owner types. Nothing is stored until the
// server accepts the rules, and the text is never replaced while the owner edits it.
import { useEffect, useId, useMemo, useRef, useState } from 'preact/hooks'
import { ContentdError, type AppAuth, type ProjectClient, type RulesDocument } from '../../shared/client/index.js'
import { useApp } from '../app-context.js'
import { CodeEditor } from '../editor/code-editor.js'
import { pretty } from '../json-text.js'
import { ConfirmButton, EmptyState, ErrorText, Loading, whileBusy } from '../ui.js'
import { RulesSimulator } from './rules-simulator.js'
import { TrustPanel } from './trust-panel.js'
import { parseRulesText, ruleStepsOf, RULES_SHAPE, STARTER_RULES } from './rules-text.js'

/** What `read` answers, or null when the server says there is none (`missing`, a 404 code). */
async function orNone<T> (read: () => Promise<T>, missing: string): Promise<T | null> {
  try {
    return await read()
  } catch (e) {
    if (e instanceof ContentdError && e.code === missing) return null
    throw e
  }
}

interface Loaded { rules: RulesDocument | null, auth: AppAuth | null }

interface PanelProps {
  project: ProjectClient
  /** From GET of the project: only what exists is read, so the tab makes no request that answers 404. */
  hasRules: boolean
  hasAppAuth: boolean
  /** Saved or removed here: the project page's hasRules and hasAppAuth follow. */
  onRules: (hasRules: boolean) => void
  onAppAuth: (hasAppAuth: boolean) => void
}

export function RulesPanel ({ project, hasRules, hasAppAuth, onRules, onAppAuth }: PanelProps) {
  const { failure } = useApp()
  const [loaded, setLoaded] = useState<Loaded | null>(null)
  const [loadError, setLoadError] = useState<string | null>(null)

  useEffect(() => {
    let alive = true
    // One removed meanwhile (another tab, the API) still reads as none.
    Promise.all([
      hasRules ? orNone(() => project.getRules(), 'RULES_NOT_FOUND') : null,
      hasAppAuth ? orNone(() => project.getAppAuth(), 'AUTH_CONFIG_NOT_FOUND') : null
    ]).then(
      ([rules, auth]) => { if (alive) setLoaded({ rules, auth }) },
      e => { if (alive) setLoadError(failure(e)) })
    return () => { alive = false }
    // Read once per visit of the tab: hasRules changing by this panel's own save is no reason to read again.
  }, [project, failure])

  if (loadError) return <ErrorText message={loadError} />
  if (!loaded) return <Loading what="the rules" />
  return (
    <div class="rules-panel">
      <TrustPanel project={project} initial={loaded.auth} onAppAuth={onAppAuth} />
      <RulesEditor project={project} initial={loaded.rules} onRules={onRules} />
    </div>
  )
}

function RulesEditor ({ project, initial, onRules }: { project: ProjectClient, initial: RulesDocument | null, onRules: (hasRules: boolean) => void }) {
  const { failure, announce } = useApp()
  const id = useId()
  const area = useRef<{ focus (): void } | null>(null)
  const [stored, setStored] = useState<RulesDocument | null>(initial)
  /** Counts saves and removals: the simulator asks again when the stored rules change. */
  const [revision, setRevision] = useState(0)
  /** The text being edited; null while the owner has not started one (no rules yet). */
  const [text, setText] = useState<string | null>(initial === null ? null : pretty(initial))
  const [problem, setProblem] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const [saved, setSaved] = useState(false)

  const showProblem = (message: string) => {
    setProblem(message)
    area.current?.focus()
  }
  const save = async () => {
    if (text === null) return
    setSaved(false)
    const parsed = parseRulesText(text)
    if (!parsed.ok) { showProblem(parsed.message); return }
    await whileBusy(setBusy, () => setProblem(null), async () => {
      const document = await project.setRules(parsed.document)
      setStored(document)
      setText(pretty(document))
      setRevision(n => n + 1)
      setSaved(true)
      onRules(true)
      announce('Rules saved: app users are checked against them from now on.')
    }, e => showProblem(failure(e)))
  }
  const remove = () => whileBusy(setBusy, () => setProblem(null), async () => {
    await project.deleteRules()
    setStored(null)
    setText(null)
    setRevision(n => n + 1)
    setSaved(false)
    onRules(false)
    announce('Rules removed: app users may do nothing.')
  }, e => showProblem(failure(e)))
  const format = () => {
    if (text === null) return
    const parsed = parseRulesText(text)
    if (!parsed.ok) { showProblem(parsed.message); return }
    setProblem(null)
    setText(pretty(parsed.document))
  }
  const discard = () => {
    setText(stored === null ? null : pretty(stored))
    setProblem(null)
    setSaved(false)
  }
  const dirty = text !== null && (stored === null || text !== pretty(stored))
  // Marked in the text where the server's message names a rule; one object per message, so the editor re-marks only when it changes.
  const problemAt = useMemo(() => {
    const steps = problem === null ? null : ruleStepsOf(problem)
    return problem !== null && steps !== null ? { path: steps, message: problem } : null
  }, [problem])

  return (
    <>
      {text === null
        ? (
          <EmptyState title="No rules yet: app users may do nothing" icon="{ }"
            actions={<button type="button" class="button primary" onClick={() => setText(pretty(STARTER_RULES))}>Write rules</button>}>
            <p>Rules decide, per path, what your app's signed-in users may read and write: CEL expressions over their token's claims (<code>auth</code>), the data and the time.
              The first draft is the example of docs/rules.md: each user's own <code>users.&lt;id&gt;</code>, and a public leaderboard where users only raise their own score.
              Owners, members and API keys are not affected.</p>
          </EmptyState>
          )
        : (
          <section class="panel rules-editor" aria-labelledby="rules-title">
            <div class="panel-head">
              <h2 id="rules-title">Rules</h2>
              <p class="hint rules-state" role="status">
                {stored === null ? 'Not saved yet: app users may do nothing.' : dirty ? 'Edited: the saved rules stay in force until you save.' : 'In force for app users.'}
              </p>
            </div>
            <p class="hint"><code>".read"</code> and <code>".write"</code> at any level, as CEL or <code>true</code>/<code>false</code>; <code>"$name"</code> matches any one key and binds <code>name</code>. A rule that is true allows everything below it.</p>
            <CodeEditor id={`${id}-rules`} label="Rules as JSON" mode="content" schema={RULES_SHAPE} handle={area} text={text} rows={12} problemAt={problemAt}
              invalid={problem !== null} describedBy={problem ? `${id}-problem` : undefined}
              onChange={next => { setText(next); setSaved(false); setProblem(null) }} />
            {problem && <p id={`${id}-problem`} class="field-error rules-problem" role="alert">{problem}</p>}
            <div class="actions">
              <button type="button" class="button primary" disabled={busy || !dirty} onClick={() => { void save() }}>{busy ? 'Saving…' : 'Save rules'}</button>
              <button type="button" class="button ghost" onClick={format}>Format</button>
              {dirty && <button type="button" class="button ghost" onClick={discard}>{stored === null ? 'Cancel' : 'Revert my changes'}</button>}
              {saved && <span class="saved" role="status">Saved.</span>}
              {stored !== null && (
                <ConfirmButton label="Remove the rules" confirmLabel="Remove" busy={busy} onConfirm={() => { void remove() }}
                  question="Remove the rules? App users may then do nothing; owners, members and keys are not affected.">
                  Remove the rules
                </ConfirmButton>
              )}
            </div>
          </section>
          )}
      <RulesSimulator project={project} hasRules={stored !== null} revision={revision} draft={dirty ? text : null} />
    </>
  )
}
