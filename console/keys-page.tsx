// API keys: create one (permission, project scope, narrowing to paths and operations,
// expiry), see its secret once, list and revoke. Keys belong to the user and reach at most what the user can.
import { useCallback, useEffect, useState } from 'preact/hooks'
import type { ApiKeyInfo, CreatedApiKey, KeyPermission, NarrowableOperation } from '../shared/client/index.js'
import { useApp } from './app-context.js'
import { EXPIRY_CHOICES, expiryOf } from './key-expiry.js'
import { describeNarrowing, NARROWABLE_OPERATIONS, narrowingOf } from './key-narrowing.js'
import { KeyIcon } from './icons.js'
import { Badge, ConfirmButton, EmptyState, ErrorText, Loading, SecretOnce, Time, valueOf } from './ui.js'

export function KeysPage () {
  const { session, projects, failure, announce, rememberKey } = useApp()
  const [keys, setKeys] = useState<ApiKeyInfo[] | null>(null)
  const [loadError, setLoadError] = useState<string | null>(null)
  const [name, setName] = useState('')
  const [permission, setPermission] = useState<KeyPermission>('read')
  const [scope, setScope] = useState<'all' | 'some'>('some')
  const [chosen, setChosen] = useState<string[]>([])
  const [pathsText, setPathsText] = useState('')
  const [ops, setOps] = useState<NarrowableOperation[]>([])
  const [expiry, setExpiry] = useState('never')
  const [date, setDate] = useState('')
  const [formError, setFormError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const [created, setCreated] = useState<CreatedApiKey | null>(null)
  const [rowErrors, setRowErrors] = useState<Record<string, string>>({})

  const load = useCallback(async () => {
    try { setKeys(await session.client.keys()); setLoadError(null) } catch (e) { setLoadError(failure(e)) }
  }, [session, failure])
  useEffect(() => { void load() }, [load])

  const toggleProject = (ref: string, on: boolean) => setChosen(list => on ? [...list, ref] : list.filter(r => r !== ref))
  const toggleOp = (op: NarrowableOperation, on: boolean) => setOps(list => on ? [...list, op] : list.filter(o => o !== op))

  const create = async (event: Event) => {
    event.preventDefault()
    setFormError(null)
    if (scope === 'some' && chosen.length === 0) { setFormError('Choose at least one project, or allow every project.'); return }
    const narrowing = narrowingOf(pathsText, ops)
    if ('problem' in narrowing) { setFormError(narrowing.problem); return }
    const expires = expiryOf(expiry, date)
    if ('problem' in expires) { setFormError(expires.problem); return }
    setBusy(true)
    try {
      const key = await session.client.createKey({ name: name.trim(), permission, ...(scope === 'some' ? { projects: chosen } : {}), ...narrowing, ...expires })
      rememberKey(key)
      setCreated(key)
      setName('')
      setPathsText('')
      setOps([])
      announce(`Key ${key.name} created.`)
      await load()
    } catch (e) {
      setFormError(failure(e))
    } finally {
      setBusy(false)
    }
  }
  const revoke = async (key: ApiKeyInfo) => {
    try {
      await session.client.revokeKey(key.id)
      announce(`Key ${key.name} revoked.`)
      await load()
    } catch (e) {
      setRowErrors(errors => ({ ...errors, [key.id]: failure(e) }))
    }
  }

  return (
    <section class="page" aria-labelledby="keys-heading">
      <div class="page-head">
        <h1 id="keys-heading">API keys</h1>
      </div>
      <p class="lead">Apps and scripts use API keys. Give each one only what it needs: read or write, the projects it may reach, and how long it lives.</p>

      <form class="panel key-form" onSubmit={create} aria-labelledby="new-key-title">
        <h2 id="new-key-title">New key</h2>
        <div class="field">
          <label for="key-name">Name</label>
          <input id="key-name" required maxLength={100} autocomplete="off" placeholder="e.g. website, import script" value={name} onInput={e => setName(valueOf(e))} />
        </div>
        <fieldset>
          <legend>Permission</legend>
          <label class="choice"><input type="radio" name="permission" value="read" checked={permission === 'read'} onChange={() => setPermission('read')} /> Read <span class="hint-inline">— get the content and subscribe</span></label>
          <label class="choice"><input type="radio" name="permission" value="write" checked={permission === 'write'} onChange={() => setPermission('write')} /> Read and write <span class="hint-inline">— also change it</span></label>
        </fieldset>
        <fieldset>
          <legend>Projects</legend>
          <label class="choice"><input type="radio" name="scope" value="some" checked={scope === 'some'} onChange={() => setScope('some')} /> Only the projects I choose</label>
          {scope === 'some' && (
            <div class="project-choices">
              {(projects ?? []).length === 0 && <p class="hint">You have no projects yet.</p>}
              {(projects ?? []).map(p => {
                const ref = `${p.username}/${p.slug}`
                return <label key={ref} class="choice mono"><input type="checkbox" checked={chosen.includes(ref)} onChange={e => toggleProject(ref, e.currentTarget.checked)} /> {ref}</label>
              })}
            </div>
          )}
          <label class="choice"><input type="radio" name="scope" value="all" checked={scope === 'all'} onChange={() => setScope('all')} /> Every project I can access, now and later</label>
        </fieldset>
        <fieldset>
          <legend>Narrow it (optional)</legend>
          <p class="hint">A narrowed key reads and writes only at or below these paths (never the whole content) and uses only the operations ticked. Leave both empty for a key that is not narrowed.</p>
          <div class="field">
            <label for="key-paths">Paths</label>
            <input id="key-paths" class="mono" autocomplete="off" placeholder="e.g. stats, posts" aria-describedby="key-paths-hint" value={pathsText} onInput={e => setPathsText(valueOf(e))} />
            <p id="key-paths-hint" class="hint">Dot paths, separated by commas.</p>
          </div>
          <fieldset>
            <legend>Operations <span class="hint-inline">— none ticked: every one its permission allows</span></legend>
            <div class="op-choices">
              {NARROWABLE_OPERATIONS.map(op => (
                <label key={op} class="choice mono"><input type="checkbox" checked={ops.includes(op)} onChange={e => toggleOp(op, e.currentTarget.checked)} /> {op}</label>
              ))}
            </div>
          </fieldset>
        </fieldset>
        <div class="form-row">
          <div class="field">
            <label for="key-expiry">Expires</label>
            <select id="key-expiry" value={expiry} onChange={e => setExpiry(valueOf(e))}>
              {EXPIRY_CHOICES.map(c => <option key={c.value} value={c.value}>{c.label}</option>)}
            </select>
          </div>
          {expiry === 'date' && (
            <div class="field">
              <label for="key-date">Last day</label>
              <input id="key-date" type="date" value={date} onInput={e => setDate(valueOf(e))} />
            </div>
          )}
        </div>
        <ErrorText message={formError} />
        <div class="actions">
          <button type="submit" class="button primary" disabled={busy || name.trim() === ''}>{busy ? 'Creating…' : 'Create key'}</button>
        </div>
        {created && <SecretOnce secret={created.key} label={`New API key ${created.name}`} onDone={() => setCreated(null)} />}
      </form>

      <section class="panel" aria-labelledby="key-list-title">
        <h2 id="key-list-title">Your keys</h2>
        <ErrorText message={loadError} />
        {!keys && !loadError && <Loading what="keys" />}
        {keys && keys.length === 0 && (
          <EmptyState title="No keys yet" icon={<KeyIcon />}>
            <p>Create one above, then use it as <code>Authorization: Bearer cdk_…</code> from your app.</p>
          </EmptyState>
        )}
        {keys && keys.length > 0 && (
          <ul class="key-list">
            {keys.map(key => {
              const expired = key.expiresAt !== null && Date.parse(key.expiresAt) <= Date.now()
              return (
                <li key={key.id} class="key-item">
                  <div class="key-main">
                    <span class="key-name">{key.name}</span>
                    <span class="mono key-prefix">{key.prefix}…</span>
                  </div>
                  <div class="key-meta">
                    <Badge tone={key.permission === 'write' ? 'warn' : 'plain'}>{key.permission === 'write' ? 'read + write' : 'read'}</Badge>
                    <span>{key.projects === null ? 'every project' : key.projects.join(', ')}</span>
                    {describeNarrowing(key) !== null && <span class="mono key-narrowing">{describeNarrowing(key)}</span>}
                    <span>{expired ? <Badge tone="bad">expired</Badge> : <>expires <Time iso={key.expiresAt} /></>}</span>
                    <span>created <Time iso={key.createdAt} /></span>
                  </div>
                  <ConfirmButton label={`Revoke key ${key.name}`} confirmLabel="Revoke" question={`Revoke ${key.name}? Apps using it stop at once.`} onConfirm={() => { void revoke(key) }}>Revoke</ConfirmButton>
                  <ErrorText message={rowErrors[key.id] || null} />
                </li>
              )
            })}
          </ul>
        )}
      </section>
    </section>
  )
}
