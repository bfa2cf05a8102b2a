// The Settings tab (owner only): the project's details, and deleting it — after the owner
// types its name, since it cannot be undone.
import { useState } from 'preact/hooks'
import type { ProjectSummary } from '../shared/client/index.js'
import { useApp } from './app-context.js'
import { ErrorText, Time, valueOf } from './ui.js'

export function SettingsPage ({ info, project }: { info: ProjectSummary, project: string }) {
  const { session, failure, announce, reloadProjects, navigate } = useApp()
  const [typed, setTyped] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const matches = typed.trim() === project

  const remove = async (event: Event) => {
    event.preventDefault()
    if (!matches) return
    setBusy(true)
    setError(null)
    try {
      await session.client.deleteProject(project)
      announce(`Project ${project} deleted.`)
      await reloadProjects()
      navigate({ page: 'projects' })
    } catch (e) {
      setError(failure(e))
      setBusy(false)
    }
  }

  return (
    <div class="settings">
      <section class="panel" aria-labelledby="details-title">
        <h2 id="details-title">Details</h2>
        <dl class="details">
          <dt>Reference</dt><dd class="mono">{project}</dd>
          <dt>Name</dt><dd>{info.name}</dd>
          <dt>Created</dt><dd><Time iso={info.createdAt} /></dd>
          <dt>API base</dt><dd class="mono">{location.origin}/api/{project}</dd>
        </dl>
      </section>
      <form class="panel danger-zone" onSubmit={remove} aria-labelledby="delete-title">
        <h2 id="delete-title">Delete this project</h2>
        <p>This deletes its content and its memberships at once, for everyone; live views of it end, and keys limited to it stop reaching it. It cannot be undone.</p>
        <label for="delete-confirm">Type <strong class="mono">{project}</strong> to confirm</label>
        <input id="delete-confirm" class="mono" autocomplete="off" autoCapitalize="none" spellcheck={false} value={typed} onInput={e => setTyped(valueOf(e))} />
        <ErrorText message={error} />
        <div class="actions">
          <button type="submit" class="button danger" disabled={!matches || busy}>{busy ? 'Deleting…' : 'Delete this project'}</button>
        </div>
      </form>
    </div>
  )
}
