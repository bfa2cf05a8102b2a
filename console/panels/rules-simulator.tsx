// The rules simulator (docs/rules.md#the-simulator-ruleschecks): a caller's claims (or "not
// signed in"), a read or a write, and a path, asked of `POST …/rules/check` as the owner types
// (debounced; a late answer to an older question is dropped). While the editor holds unsaved
// edits, those are sent as the body's `rules` (checked, not stored); otherwise the server checks
// the saved rules. The verdict is announced politely (a live region).
import { useEffect, useId, useRef, useState } from 'preact/hooks'
import type { ProjectClient, RulesCheck } from '../../shared/client/index.js'
import { useApp } from '../app-context.js'
import { valueOf } from '../ui.js'
import { decisionText, parseClaims, parseRulesText, valueOfText } from './rules-text.js'

/** Quiet time after the last keystroke before the server is asked. */
export const SIMULATE_AFTER_MS = 300

type Verdict =
  | { state: 'idle' }
  | { state: 'answered', allowed: boolean, text: string }
  | { state: 'not-asked', text: string }

interface Props {
  project: ProjectClient
  /** Whether rules are saved (no rules: everything is denied, and the verdict says why). */
  hasRules: boolean
  /** Changes whenever the saved rules do: the same question is asked again. */
  revision: number
  /** The editor's text when it holds edits not saved yet: the simulator checks those. */
  draft: string | null
}

export function RulesSimulator ({ project, hasRules, revision, draft }: Props) {
  const { failure } = useApp()
  const id = useId()
  const [claims, setClaims] = useState('{"sub": "u1"}')
  const [signedIn, setSignedIn] = useState(true)
  const [op, setOp] = useState<'read' | 'write'>('write')
  const [path, setPath] = useState('users.u1.name')
  const [value, setValue] = useState('"Ann"')
  const [claimsProblem, setClaimsProblem] = useState<string | null>(null)
  const [verdict, setVerdict] = useState<Verdict>({ state: 'idle' })
  /** A question is waiting for its answer: the last verdict stays (marked busy), so typing is not read out. */
  const [pending, setPending] = useState(false)
  /** The latest question asked: only its answer is shown. */
  const asked = useRef(0)

  useEffect(() => {
    const question = ++asked.current
    const who = parseClaims(claims, signedIn)
    setClaimsProblem(who.ok ? null : who.message)
    if (!who.ok) {
      setPending(false)
      setVerdict({ state: 'not-asked', text: `Not checked: ${who.message}` })
      return
    }
    const edits = draft === null ? null : parseRulesText(draft)
    if (edits !== null && !edits.ok) {
      setPending(false)
      setVerdict({ state: 'not-asked', text: `Not checked: the rules above are not valid yet (${edits.message})` })
      return
    }
    const trimmed = path.trim()
    const written = op === 'write' ? valueOfText(value) : undefined
    const check: RulesCheck = { auth: who.auth, op, path: trimmed, ...(written === undefined ? {} : { value: written }), ...(edits === null ? {} : { rules: edits.document }) }
    setPending(true)
    const timer = setTimeout(() => {
      project.checkRules(check).then(decision => {
        if (question !== asked.current) return
        setPending(false)
        setVerdict({ state: 'answered', allowed: decision.allowed, text: decisionText(decision, op, trimmed, hasRules || edits !== null) })
      }, e => {
        if (question !== asked.current) return
        setPending(false)
        setVerdict({ state: 'not-asked', text: `Not checked: ${failure(e)}` })
      })
    }, SIMULATE_AFTER_MS)
    return () => clearTimeout(timer)
  }, [project, claims, signedIn, op, path, value, hasRules, revision, draft, failure])

  return (
    <section class="panel rules-simulator" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Simulator</h2>
      <p class="hint">Would an app user with these claims be allowed? Asked of the server as you type, against the current content. Nothing is written.</p>
      <p class="hint rules-checked">{draft === null ? 'Checking the saved rules.' : 'Checking the rules in the editor (not saved yet: app users are still checked against the saved ones).'}</p>
      <div class="rules-sim-form">
        <div class="field grow">
          <label for={`${id}-claims`}>Token claims (JSON)</label>
          <input id={`${id}-claims`} class="mono" value={claims} disabled={!signedIn} spellcheck={false}
            aria-invalid={claimsProblem ? true : undefined} aria-describedby={claimsProblem ? `${id}-claims-problem` : undefined}
            onInput={e => setClaims(valueOf(e))} />
          <label class="choice"><input type="checkbox" checked={!signedIn} onChange={e => setSignedIn(!e.currentTarget.checked)} /> Not signed in</label>
          {claimsProblem && <p id={`${id}-claims-problem`} class="field-error">{claimsProblem}</p>}
        </div>
        <div class="field">
          <label for={`${id}-op`}>Operation</label>
          <select id={`${id}-op`} value={op} onChange={e => setOp(e.currentTarget.value === 'read' ? 'read' : 'write')}>
            <option value="read">read</option>
            <option value="write">write</option>
          </select>
        </div>
        <div class="field grow">
          <label for={`${id}-path`}>Path</label>
          <input id={`${id}-path`} class="mono" value={path} placeholder="users.u1 (empty: the whole content)" spellcheck={false} onInput={e => setPath(valueOf(e))} />
        </div>
        {op === 'write' && (
          <div class="field grow">
            <label for={`${id}-value`}>Value written</label>
            <input id={`${id}-value`} class="mono" value={value} placeholder="empty: a delete" spellcheck={false} aria-describedby={`${id}-value-hint`} onInput={e => setValue(valueOf(e))} />
            <span id={`${id}-value-hint`} class="hint">JSON (<code>10</code>, <code>"Ann"</code>, <code>{'{"a": 1}'}</code>) or plain text; empty is a delete</span>
          </div>
        )}
      </div>
      <p class="rules-verdict" data-state={verdict.state === 'answered' ? (verdict.allowed ? 'allowed' : 'denied') : verdict.state}
        data-pending={pending ? 'true' : 'false'} role="status" aria-live="polite" aria-atomic="true" aria-busy={pending}>
        {verdict.state === 'answered' && <><span class={`badge badge-${verdict.allowed ? 'ok' : 'bad'}`} aria-hidden="true">{verdict.allowed ? 'Allowed' : 'Denied'}</span>{' '}</>}
        <span class="rules-verdict-text">{verdict.state === 'idle' ? 'Checking…' : verdict.text}</span>
      </p>
    </section>
  )
}
