// The Webhooks tab (owner; docs/webhooks.md): the project's webhooks with their filters, state
// and cursor (every page of the list: the SDK's webhooks() follows nextCursor); adding one
// (its signing secret shown once; past MAX_WEBHOOKS_PER_PROJECT the form shows the 403);
// deleting; each one's last deliveries, and a test ping.
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { useApp } from '../app-context.js'
import { Badge, ConfirmButton, EmptyState, ErrorText, Loading, SecretOnce, Time, valueOf } from '../ui.js'
import type { CreatedWebhook, DeliveryView, PingResult, ProjectClient, WebhookView } from '../../shared/client/index.js'
import { parsePathList, WEBHOOK_OP_CHOICES } from './webhook-form.js'
import { useLivePoll } from '../live-poll.js'

export function WebhooksPanel ({ project }: { project: string }) {
  const { session, failure, announce } = useApp()
  const api = useMemo(() => session.client.project(project), [session, project])
  const [webhooks, setWebhooks] = useState<WebhookView[] | null>(null)
  const [loadError, setLoadError] = useState<string | null>(null)
  const [url, setUrl] = useState('')
  const [paths, setPaths] = useState('')
  const [ops, setOps] = useState<string[]>([])
  const [description, setDescription] = useState('')
  const [formError, setFormError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const [created, setCreated] = useState<CreatedWebhook | null>(null)
  const [rowErrors, setRowErrors] = useState<Record<string, string>>({})

  const shown = useRef('')
  /** Re-reads the list; says whether it differs from the one shown. */
  const load = useCallback(async () => {
    try {
      const found = await api.webhooks()
      setLoadError(null)
      const text = JSON.stringify(found)
      if (text === shown.current) return false
      shown.current = text
      setWebhooks(found)
      return true
    } catch (e) {
      setLoadError(failure(e))
      return false
    }
  }, [api, failure])
  useEffect(() => { void load() }, [load])
  // Delivery progress (delivered up to, disabled) shows without a reload (console/live-poll.ts).
  useLivePoll(load)

  const create = async (event: Event) => {
    event.preventDefault()
    setFormError(null)
    const parsed = parsePathList(paths)
    if (!parsed.ok) { setFormError(parsed.message); return }
    setBusy(true)
    try {
      const made = await api.createWebhook({
        url: url.trim(),
        ...(parsed.paths.length > 0 ? { paths: parsed.paths } : {}),
        ...(ops.length > 0 ? { ops } : {}),
        ...(description.trim() !== '' ? { description: description.trim() } : {})
      })
      setCreated(made)
      announce(`Webhook added: ${made.url}.`)
      setUrl(''); setPaths(''); setOps([]); setDescription('')
      await load()
    } catch (e) {
      setFormError(failure(e))
    } finally {
      setBusy(false)
    }
  }
  const remove = async (webhook: WebhookView) => {
    try {
      await api.deleteWebhook(webhook.id)
      announce(`Webhook to ${webhook.url} deleted.`)
      await load()
    } catch (e) {
      setRowErrors(errors => ({ ...errors, [webhook.id]: failure(e) }))
    }
  }
  const toggleOp = (op: string, on: boolean) => setOps(chosen => on ? [...chosen.filter(o => o !== op), op] : chosen.filter(o => o !== op))

  return (
    <div class="webhooks">
      <form class="panel webhook-form" onSubmit={create} aria-labelledby="new-webhook-title">
        <h2 id="new-webhook-title">Add a webhook</h2>
        <p class="hint">contentd POSTs each matching change to your URL, signed, in version order (<a href="/docs" target="_blank" rel="noopener">docs</a>).</p>
        <div class="field">
          <label for="webhook-url">URL</label>
          <input id="webhook-url" type="url" required maxLength={2048} autocomplete="off" spellcheck={false} placeholder="https://hooks.example.com/contentd" value={url} onInput={e => setUrl(valueOf(e))} />
        </div>
        <div class="field">
          <label for="webhook-paths">Paths</label>
          <input id="webhook-paths" autocomplete="off" spellcheck={false} placeholder="site, stock.items" value={paths} onInput={e => setPaths(valueOf(e))} aria-describedby="webhook-paths-hint" />
          <p id="webhook-paths-hint" class="hint">Dot paths, separated by commas: a change at or below one of them is sent. Empty: every path.</p>
        </div>
        <fieldset>
          <legend>Operations <span class="hint-inline">— none chosen: every operation</span></legend>
          <div class="op-choices">
            {WEBHOOK_OP_CHOICES.map(op => (
              <label key={op} class="choice mono"><input type="checkbox" checked={ops.includes(op)} onChange={e => toggleOp(op, e.currentTarget.checked)} /> {op}</label>
            ))}
          </div>
        </fieldset>
        <div class="field">
          <label for="webhook-description">Description</label>
          <input id="webhook-description" maxLength={500} autocomplete="off" placeholder="e.g. rebuild the site" value={description} onInput={e => setDescription(valueOf(e))} />
        </div>
        <ErrorText message={formError} />
        <div class="actions">
          <button type="submit" class="button primary" disabled={busy || url.trim() === ''}>{busy ? 'Adding…' : 'Add webhook'}</button>
        </div>
        {created && (
          <SecretOnce secret={created.secret} label={`Signing secret of the webhook to ${created.url}`} onDone={() => setCreated(null)}
            note={<><strong>Copy this signing secret now.</strong> It is shown only once; your receiver checks each delivery's signature with it.</>} />
        )}
      </form>

      <section class="panel" aria-labelledby="webhook-list-title">
        <h2 id="webhook-list-title">Webhooks</h2>
        <ErrorText message={loadError} />
        {!webhooks && !loadError && <Loading what="webhooks" />}
        {webhooks && webhooks.length === 0 && (
          <EmptyState title="No webhooks yet" icon="↗">
            <p>Add one above to have changes sent to your server: rebuild a site, notify a chat, copy content elsewhere.</p>
          </EmptyState>
        )}
        {webhooks && webhooks.length > 0 && (
          <ul class="webhook-list">
            {webhooks.map(webhook => (
              <WebhookItem key={webhook.id} webhook={webhook} api={api} error={rowErrors[webhook.id] ?? null} onDelete={() => { void remove(webhook) }} />
            ))}
          </ul>
        )}
      </section>
    </div>
  )
}

function WebhookItem ({ webhook, api, error, onDelete }: { webhook: WebhookView, api: ProjectClient, error: string | null, onDelete: () => void }) {
  const { failure } = useApp()
  const [deliveries, setDeliveries] = useState<DeliveryView[] | null>(null)
  const [open, setOpen] = useState(false)
  const [ping, setPing] = useState<PingResult | null>(null)
  const [pinging, setPinging] = useState(false)
  const [rowError, setRowError] = useState<string | null>(null)

  const loadDeliveries = async () => {
    try { setDeliveries(await api.webhookDeliveries(webhook.id)); setRowError(null) } catch (e) { setRowError(failure(e)) }
  }
  // An open deliveries list follows the progress.
  useEffect(() => { if (open) void loadDeliveries() }, [webhook.cursor])
  const toggle = () => {
    if (!open) void loadDeliveries()
    setOpen(!open)
  }
  const test = async () => {
    setPinging(true)
    setPing(null)
    setRowError(null)
    try { setPing(await api.pingWebhook(webhook.id)) } catch (e) { setRowError(failure(e)) } finally { setPinging(false) }
  }
  const listId = `deliveries-${webhook.id}`

  return (
    <li class="webhook-item" data-webhook={webhook.id}>
      <div class="webhook-main">
        <span class="mono webhook-url">{webhook.url}</span>
        {webhook.enabled ? <Badge tone="ok">enabled</Badge> : <Badge tone="bad">disabled</Badge>}
      </div>
      {webhook.description && <p class="webhook-description">{webhook.description}</p>}
      <div class="key-meta">
        <span>paths: <span class="mono">{webhook.paths === null ? 'all' : webhook.paths.map(p => p === '' ? '(root)' : p).join(', ')}</span></span>
        <span>ops: <span class="mono">{webhook.ops === null ? 'all' : webhook.ops.join(', ')}</span></span>
        <span>delivered up to <span class="mono">v{webhook.cursor}</span></span>
        {webhook.failingSince && <span>failing since <Time iso={webhook.failingSince} /></span>}
        <span>added <Time iso={webhook.createdAt} /></span>
      </div>
      {!webhook.enabled && webhook.disabledReason && <p class="banner banner-bad">Disabled: {webhook.disabledReason}</p>}
      <div class="webhook-actions">
        <button type="button" class="button small" aria-expanded={open} aria-controls={listId} onClick={toggle}>Deliveries</button>
        <button type="button" class="button small" disabled={pinging} onClick={() => { void test() }}>{pinging ? 'Sending…' : 'Send a test ping'}</button>
        <ConfirmButton label={`Delete the webhook to ${webhook.url}`} confirmLabel="Delete" question={`Delete the webhook to ${webhook.url}? Nothing more is sent to it.`} onConfirm={onDelete}>Delete</ConfirmButton>
      </div>
      {ping && (
        <p class={`ping ${ping.delivered ? 'ping-ok' : 'ping-bad'}`} role="status">
          {ping.delivered ? `Ping delivered: HTTP ${ping.status ?? ''} in ${ping.durationMs} ms.` : `Ping not delivered: ${ping.status === null ? 'no answer' : `HTTP ${ping.status}`}${ping.error ? ` (${ping.error})` : ''}.`}
        </p>
      )}
      <ErrorText message={error ?? rowError} />
      {open && (
        <div id={listId} class="deliveries">
          <div class="deliveries-head">
            <h3>Last deliveries</h3>
            <button type="button" class="button ghost small" onClick={() => { void loadDeliveries() }}>Refresh</button>
          </div>
          {!deliveries && <Loading what="deliveries" />}
          {deliveries && deliveries.length === 0 && <p class="hint">Nothing sent yet: changes after v{webhook.cursor} that match are sent as they happen.</p>}
          {deliveries && deliveries.length > 0 && (
            <div class="table-wrap">
              <table>
                <caption class="visually-hidden">The last {deliveries.length} delivery attempts, newest first</caption>
                <thead><tr><th scope="col">Version</th><th scope="col">Outcome</th><th scope="col">Status</th><th scope="col">Attempt</th><th scope="col">When</th><th scope="col">Time</th></tr></thead>
                <tbody>
                  {deliveries.map((d, i) => (
                    <tr key={i}>
                      <td class="mono">v{d.version}</td>
                      <td><Badge tone={d.outcome === 'delivered' ? 'ok' : d.outcome === 'lost' ? 'bad' : 'warn'}>{d.outcome}</Badge>{d.error && <span class="delivery-error"> {d.error}</span>}</td>
                      <td class="mono">{d.status ?? '—'}</td>
                      <td>{d.attempt}</td>
                      <td><Time iso={d.at} /></td>
                      <td>{d.durationMs} ms</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </div>
      )}
    </li>
  )
}
