// Small building blocks shared by the pages.
import type { ComponentChildren, TargetedEvent } from 'preact'
import { useEffect, useId, useRef, useState } from 'preact/hooks'

/** An error shown next to what caused it; announced to screen readers as it appears. */
export function ErrorText ({ id, message }: { id?: string, message: string | null | undefined }) {
  if (!message) return null
  return <p id={id} class="field-error" role="alert">{message}</p>
}

export function EmptyState ({ title, children, actions, icon = '◇' }: { title: string, children?: ComponentChildren, actions?: ComponentChildren, icon?: ComponentChildren }) {
  return (
    <div class="empty">
      <div class="empty-icon" aria-hidden="true">{icon}</div>
      <h3>{title}</h3>
      {children}
      {actions && <div class="empty-actions">{actions}</div>}
    </div>
  )
}

export function Badge ({ children, tone = 'plain' }: { children: ComponentChildren, tone?: 'plain' | 'accent' | 'ok' | 'warn' | 'bad' }) {
  return <span class={`badge badge-${tone}`}>{children}</span>
}

/** Copies `text`; says "Copied" for a moment. Falls back to selecting `select` when the clipboard is refused. */
export function CopyButton ({ text, label = 'Copy', describedBy, select }: { text: string, label?: string, describedBy?: string, select?: () => void }) {
  const [state, setState] = useState<'idle' | 'copied' | 'manual'>('idle')
  useEffect(() => {
    if (state === 'idle') return
    const timer = setTimeout(() => setState('idle'), 2000)
    return () => clearTimeout(timer)
  }, [state])
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text)
      setState('copied')
    } catch {
      select?.()
      setState('manual')
    }
  }
  return (
    <button type="button" class="button small" onClick={copy} aria-describedby={describedBy}>
      {state === 'copied' ? 'Copied ✓' : state === 'manual' ? 'Press Ctrl+C' : label}
    </button>
  )
}

const KEY_NOTE = <><strong>Copy this key now.</strong> It is shown only once: contentd keeps only its hash.</>

/** A secret shown once (an API key, a webhook's signing secret): read-only, selected, with a copy button. */
export function SecretOnce ({ secret, label, onDone, note = KEY_NOTE }: { secret: string, label: string, onDone: () => void, note?: ComponentChildren }) {
  const id = useId()
  const input = useRef<HTMLInputElement>(null)
  useEffect(() => { input.current?.focus(); input.current?.select() }, [secret])
  return (
    <div class="secret" role="group" aria-labelledby={`${id}-title`}>
      <p id={`${id}-title`} class="secret-title">{note}</p>
      <label for={`${id}-value`} class="visually-hidden">{label}</label>
      <div class="input-row">
        <input id={`${id}-value`} ref={input} class="mono" readOnly value={secret} onFocus={e => e.currentTarget.select()} />
        <CopyButton text={secret} select={() => input.current?.select()} />
      </div>
      <button type="button" class="button ghost small" onClick={onDone}>I have copied it</button>
    </div>
  )
}

/** An action that asks once more before it runs (revoke, remove). */
export function ConfirmButton ({ children, label, confirmLabel, question, onConfirm, busy }: { children: ComponentChildren, label: string, confirmLabel: string, question: string, onConfirm: () => void, busy?: boolean }) {
  const [asking, setAsking] = useState(false)
  const confirm = useRef<HTMLButtonElement>(null)
  useEffect(() => { if (asking) confirm.current?.focus() }, [asking])
  if (!asking) return <button type="button" class="button small danger-ghost" onClick={() => setAsking(true)} aria-label={label}>{children}</button>
  return (
    <span class="confirm" role="group" aria-label={question}>
      <span class="confirm-question">{question}</span>
      <button type="button" ref={confirm} class="button small danger" disabled={busy} onClick={onConfirm}>{confirmLabel}</button>
      <button type="button" class="button small ghost" onClick={() => setAsking(false)}>Cancel</button>
    </span>
  )
}

export function Loading ({ what }: { what: string }) {
  return <p class="loading" role="status"><span class="spinner" aria-hidden="true" /> Loading {what}…</p>
}

/** Relative time for people: "3 min ago", "in 6 days", or the date. */
export function when (iso: string | null, now = Date.now()): string {
  if (iso === null) return 'never'
  const t = Date.parse(iso)
  if (Number.isNaN(t)) return iso
  const seconds = Math.round((t - now) / 1000)
  const units: Array<[Intl.RelativeTimeFormatUnit, number]> = [['year', 31_536_000], ['month', 2_592_000], ['day', 86_400], ['hour', 3600], ['minute', 60]]
  const format = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' })
  for (const [unit, size] of units) {
    if (Math.abs(seconds) >= size) return format.format(Math.round(seconds / size), unit)
  }
  return format.format(seconds, 'second')
}

export function Time ({ iso }: { iso: string | null }) {
  if (iso === null) return <span>never</span>
  return <time dateTime={iso} title={new Date(iso).toLocaleString()}>{when(iso)}</time>
}

export type InputEvent = TargetedEvent<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement, Event>

/** The current value of an input, select or textarea from its event. */
export const valueOf = (event: InputEvent): string => event.currentTarget.value

/**
 * A panel's request: the panel busy and its problem cleared while it runs, a failure handed to
 * `failed`, busy again however it ends.
 */
export async function whileBusy (setBusy: (busy: boolean) => void, clearProblem: () => void, request: () => Promise<void>, failed: (error: unknown) => void): Promise<void> {
  setBusy(true)
  clearProblem()
  try {
    await request()
  } catch (e) {
    failed(e)
  } finally {
    setBusy(false)
  }
}
