// The Connect tab: how an app reaches this project — the REST base URL, curl, the SDK and a
// page without a bundler — filled in with a key the user picks or makes here.
import { useEffect, useId, useMemo, useState } from 'preact/hooks'
import type { CreatedApiKey, KeyPermission, ProjectRole } from '../shared/client/index.js'
import { useApp } from './app-context.js'
import { PLACEHOLDER, snippetsFor, usableKeys } from './snippets.js'
import { CopyButton, ErrorText, SecretOnce, valueOf } from './ui.js'

function Snippet ({ title, code, note }: { title: string, code: string, note?: string }) {
  const id = useId()
  return (
    <section class="snippet" aria-labelledby={`${id}-title`}>
      <div class="snippet-head">
        <h3 id={`${id}-title`}>{title}</h3>
        <CopyButton text={code} describedBy={`${id}-title`} />
      </div>
      {note && <p class="hint">{note}</p>}
      <pre tabIndex={0} aria-labelledby={`${id}-title`}><code>{code}</code></pre>
    </section>
  )
}

export function ConnectPage ({ project, role }: { project: string, role: ProjectRole }) {
  const { session, createdKeys, rememberKey, failure, announce } = useApp()
  // The ids of the keys the server still has: revoked keys (here, on the Keys page, from the
  // CLI or another tab) are not offered.
  const [listed, setListed] = useState<ReadonlySet<string> | null>(null)
  useEffect(() => {
    let current = true
    session.client.keys().then(keys => { if (current) setListed(new Set(keys.map(k => k.id))) }, (e: unknown) => { if (current) setError(failure(e)) })
    return () => { current = false }
  }, [session, createdKeys])
  const usable = useMemo(() => usableKeys(createdKeys, project, listed), [createdKeys, project, listed])
  // null: the first usable key, once they are known; '': the placeholder.
  const [chosen, setChosen] = useState<string | null>(null)
  const [fresh, setFresh] = useState<CreatedApiKey | null>(null)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const selected = usable.find(k => k.id === (chosen ?? usable[0]?.id))
  const snippets = snippetsFor(location.origin, project, selected?.key ?? PLACEHOLDER, selected?.permission ?? null)

  const create = async (permission: KeyPermission) => {
    setBusy(true)
    setError(null)
    try {
      const created = await session.client.createKey({ name: `${project} ${permission === 'read' ? 'read-only' : 'read-write'}`, permission, projects: [project] })
      rememberKey(created)
      setChosen(created.id)
      setFresh(created)
      announce(`Key ${created.name} created.`)
    } catch (e) {
      setError(failure(e))
    } finally {
      setBusy(false)
    }
  }

  return (
    <div class="connect">
      <section class="panel" aria-labelledby="connect-key">
        <h2 id="connect-key">Key for these examples</h2>
        <p class="hint">Apps use an API key, not your password. A key's secret is shown once, so the examples can only include live keys made in this tab; any other key works the same.{selected?.permission === 'read' && ' This key is read-only: the examples only read.'}</p>
        <div class="input-row">
          <label for="connect-key-choice" class="visually-hidden">Key used in the examples</label>
          <select id="connect-key-choice" value={selected?.id ?? ''} onChange={e => setChosen(valueOf(e))}>
            <option value="">A placeholder: {PLACEHOLDER}</option>
            {usable.map(k => <option key={k.id} value={k.id}>{k.name} ({k.permission}, {k.prefix}…)</option>)}
          </select>
          <button type="button" class="button" disabled={busy} onClick={() => create('read')}>Create a read-only key</button>
          {role !== 'viewer' && <button type="button" class="button ghost" disabled={busy} onClick={() => create('write')}>Create a read-write key</button>}
        </div>
        <ErrorText message={error} />
        {fresh && <SecretOnce secret={fresh.key} label={`New API key ${fresh.name}`} onDone={() => setFresh(null)} />}
      </section>

      <section class="panel" aria-labelledby="connect-rest">
        <h2 id="connect-rest">REST</h2>
        <label for="connect-base" class="field-label">Base URL of {project}</label>
        <div class="input-row">
          <input id="connect-base" class="mono" readOnly value={snippets.base} onFocus={e => e.currentTarget.select()} />
          <CopyButton text={snippets.base} />
        </div>
        <Snippet title="curl" code={snippets.curl} />
        <p class="hint">Every endpoint, with “Try it”: <a href="/docs" target="_blank" rel="noopener">the API reference at /docs</a>.</p>
      </section>

      <section class="panel" aria-labelledby="connect-js">
        <h2 id="connect-js">JavaScript</h2>
        <Snippet title="Install the SDK into your app" code={snippets.install} note="From a clone of contentd or from its git repository, as in the README." />
        <Snippet title="Node or a bundler" code={snippets.sdk} />
        <Snippet title="A web page without a bundler" code={snippets.page} note="Use a read-only key limited to this project: code in a page is public." />
        <Snippet title="Server-Sent Events (EventSource, no library)" code={snippets.events} note="The key is in the URL: use a read-only key limited to this project." />
      </section>
    </div>
  )
}
