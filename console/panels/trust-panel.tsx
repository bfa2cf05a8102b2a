// The app sign-in a project trusts (docs/rules.md#trust-settings-auth), on the Rules tab: shown
// (issuer, audience, how tokens are checked; never a secret), set or changed with a form
// (setAppAuth), removed after a confirmation (deleteAppAuth). What the server refuses
// (INVALID_AUTH_CONFIG, WEBHOOK_URL_FORBIDDEN) shows under the form.
import { useId, useState } from 'preact/hooks'
import type { AppAuth, ProjectClient } from '../../shared/client/index.js'
import { useApp } from '../app-context.js'
import { ConfirmButton, ErrorText, Time, valueOf, whileBusy } from '../ui.js'
import { authKindText } from './rules-text.js'
import { readTrustForm, trustFormOf, type TrustForm, type TrustKind } from './trust-form.js'

export function TrustPanel ({ project, initial, onAppAuth }: { project: ProjectClient, initial: AppAuth | null, onAppAuth: (hasAppAuth: boolean) => void }) {
  const { failure, announce } = useApp()
  const id = useId()
  const [auth, setAuth] = useState<AppAuth | null>(initial)
  /** The form while the owner sets or changes the setting; null otherwise. */
  const [form, setForm] = useState<TrustForm | null>(null)
  const [problem, setProblem] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)

  const change = (patch: Partial<TrustForm>) => { if (form) setForm({ ...form, ...patch }); setProblem(null) }
  const save = async (event: Event) => {
    event.preventDefault()
    if (!form) return
    const read = readTrustForm(form)
    if (!read.ok) { setProblem(read.message); return }
    await whileBusy(setBusy, () => setProblem(null), async () => {
      setAuth(await project.setAppAuth(read.settings))
      setForm(null)
      onAppAuth(true)
      announce('App sign-in saved: tokens from this issuer are accepted from now on.')
    }, e => setProblem(failure(e)))
  }
  const remove = () => whileBusy(setBusy, () => setProblem(null), async () => {
    await project.deleteAppAuth()
    setAuth(null)
    onAppAuth(false)
    announce('App sign-in removed: app users\' tokens are refused.')
  }, e => setProblem(failure(e)))

  return (
    <section class="panel rules-trust" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>App sign-in</h2>
      {auth
        ? (
          <dl class="details">
            <dt>Issuer</dt><dd class="mono">{auth.issuer}</dd>
            <dt>Audience</dt><dd class="mono">{auth.audience ?? '(any)'}</dd>
            <dt>Checked with</dt><dd>{authKindText(auth)}</dd>
            <dt>Set</dt><dd>by {auth.setBy} <Time iso={auth.setAt} /></dd>
          </dl>
          )
        : <p>No app sign-in is trusted yet: every app user's token is refused (401 INVALID_TOKEN), whatever the rules say.</p>}
      {form
        ? (
          <form class="trust-form" onSubmit={e => { void save(e) }}>
            <div class="field">
              <label for={`${id}-issuer`}>Issuer (<code>iss</code>)</label>
              <input id={`${id}-issuer`} class="mono" value={form.issuer} required placeholder="https://myapp.example/" onInput={e => change({ issuer: valueOf(e) })} />
            </div>
            <div class="field">
              <label for={`${id}-audience`}>Audience (<code>aud</code>, optional)</label>
              <input id={`${id}-audience`} class="mono" value={form.audience} placeholder="any audience" onInput={e => change({ audience: valueOf(e) })} />
            </div>
            <div class="field">
              <label for={`${id}-kind`}>Check signatures with</label>
              <select id={`${id}-kind`} value={form.kind} onChange={e => change({ kind: e.currentTarget.value as TrustKind })}>
                <option value="hs256Secret">a shared HS256 secret</option>
                <option value="jwksUrl">a JWKS URL (RS256, ES256, EdDSA)</option>
                <option value="jwks">a JWK set, pasted (RS256, ES256, EdDSA)</option>
              </select>
            </div>
            {form.kind === 'hs256Secret' && (
              <div class="field">
                <label for={`${id}-secret`}>HS256 secret (at least 32 bytes; stored encrypted, never shown again)</label>
                <input id={`${id}-secret`} class="mono" type="password" autocomplete="off" value={form.secret} onInput={e => change({ secret: valueOf(e) })} />
              </div>
            )}
            {form.kind === 'jwksUrl' && (
              <div class="field">
                <label for={`${id}-url`}>JWKS URL</label>
                <input id={`${id}-url`} class="mono" type="url" value={form.jwksUrl} placeholder="https://myapp.example/.well-known/jwks.json" onInput={e => change({ jwksUrl: valueOf(e) })} />
              </div>
            )}
            {form.kind === 'jwks' && (
              <div class="field">
                <label for={`${id}-jwks`}>JWK set (JSON, public keys only)</label>
                <textarea id={`${id}-jwks`} class="mono" rows={6} value={form.jwks} spellcheck={false} placeholder={'{"keys": [ … ]}'} onInput={e => change({ jwks: valueOf(e) })} />
              </div>
            )}
            <ErrorText id={`${id}-problem`} message={problem} />
            <div class="actions">
              <button type="submit" class="button primary" disabled={busy}>{busy ? 'Saving…' : 'Save the app sign-in'}</button>
              <button type="button" class="button ghost" onClick={() => { setForm(null); setProblem(null) }}>Cancel</button>
            </div>
          </form>
          )
        : (
          <div class="actions">
            <button type="button" class="button" onClick={() => setForm(trustFormOf(auth))}>{auth ? 'Change the app sign-in' : 'Trust an app sign-in'}</button>
            {auth && (
              <ConfirmButton label="Stop trusting the app sign-in" confirmLabel="Stop trusting" busy={busy} onConfirm={() => { void remove() }}
                question="Stop trusting this sign-in? Every app user's token is refused from then on; the rules stay.">
                Stop trusting
              </ConfirmButton>
            )}
            <ErrorText message={problem} />
          </div>
          )}
      <p class="hint">Tokens must be signed by it, name this issuer (and audience, when one is set), be unexpired and have a string <code>sub</code> (docs/rules.md; <a href="/docs" target="_blank" rel="noopener">API reference</a>).</p>
    </section>
  )
}
