// The projects the user can see, and the form that creates one.
import { useState } from 'preact/hooks'
import { useApp } from './app-context.js'
import { useLivePoll } from './live-poll.js'
import { hrefOf } from './route.js'
import { Badge, EmptyState, ErrorText, Loading, Time, valueOf } from './ui.js'

const SLUG = /^[a-z0-9][a-z0-9_-]{0,63}$/

export function ProjectsPage () {
  const { projects, projectsError, session, reloadProjects } = useApp()
  // Versions and new shares show without a reload (console/live-poll.ts).
  useLivePoll(reloadProjects)
  return (
    <section class="page" aria-labelledby="projects-heading">
      <div class="page-head">
        <h1 id="projects-heading">Projects</h1>
        {projects && projects.length > 0 && <a class="button primary" href="#/new">+ New project</a>}
      </div>
      <ErrorText message={projectsError} />
      {!projects && !projectsError && <Loading what="your projects" />}
      {projects && projects.length === 0 && (
        <EmptyState title="Create your first project" icon="{ }"
          actions={<a class="button primary" href="#/new">+ New project</a>}>
          <p>A project holds one JSON document. Your apps change values in it over REST
            (<code>increment</code>, <code>set</code>, <code>push</code>…) and every page subscribed to it sees the change at once.</p>
        </EmptyState>
      )}
      {projects && projects.length > 0 && (
        <ul class="cards">
          {projects.map(p => {
            const ref = `${p.username}/${p.slug}`
            return (
              <li key={ref} class="card project-card">
                <a class="card-link" href={hrefOf({ page: 'project', project: ref, tab: 'content' })}>
                  <span class="card-title">{p.name}</span>
                  <span class="card-ref mono">{ref}</span>
                </a>
                <div class="card-meta">
                  <Badge tone={p.role === 'owner' ? 'accent' : 'plain'}>{p.username === session.username ? 'owner' : p.role ?? 'member'}</Badge>
                  <span>version {p.version}</span>
                  <span>created <Time iso={p.createdAt} /></span>
                </div>
              </li>
            )
          })}
        </ul>
      )}
    </section>
  )
}

export function NewProjectPage () {
  const { session, reloadProjects, navigate, announce, failure } = useApp()
  const [slug, setSlug] = useState('')
  const [name, setName] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const slugProblem = slug !== '' && !SLUG.test(slug) ? 'Use lower-case letters, digits, - and _, starting with a letter or digit (up to 64).' : null

  const submit = async (event: Event) => {
    event.preventDefault()
    if (slugProblem) return
    setBusy(true)
    setError(null)
    try {
      const project = await session.client.createProject(name.trim() ? { slug, name: name.trim() } : { slug })
      const ref = `${project.username}/${project.slug}`
      announce(`Project ${ref} created.`)
      await reloadProjects()
      navigate({ page: 'project', project: ref, tab: 'content' })
    } catch (e) {
      setError(failure(e))
    } finally {
      setBusy(false)
    }
  }

  return (
    <section class="page narrow" aria-labelledby="new-project-heading">
      <div class="page-head"><h1 id="new-project-heading">New project</h1></div>
      <form class="panel stack" onSubmit={submit}>
        <label for="project-slug">Slug</label>
        <div class="prefixed">
          <span class="prefix mono" aria-hidden="true">{session.username}/</span>
          <input id="project-slug" class="mono" required maxLength={64} autocomplete="off" autoCapitalize="none" spellcheck={false}
            value={slug} onInput={e => setSlug(valueOf(e).toLowerCase())}
            aria-invalid={slugProblem ? true : undefined} aria-describedby="project-slug-hint project-slug-error" />
        </div>
        <p id="project-slug-hint" class="hint">Part of every URL: <code>/api/{session.username}/{slug || 'slug'}/content</code>. It cannot change later.</p>
        <ErrorText id="project-slug-error" message={slugProblem} />
        <label for="project-name">Display name <span class="optional">(optional)</span></label>
        <input id="project-name" maxLength={200} autocomplete="off" value={name} onInput={e => setName(valueOf(e))} placeholder={slug || 'My project'} />
        <ErrorText message={error} />
        <div class="actions">
          <button type="submit" class="button primary" disabled={busy || slug === '' || slugProblem !== null}>{busy ? 'Creating…' : 'Create project'}</button>
          <a class="button ghost" href="#/">Cancel</a>
        </div>
      </form>
    </section>
  )
}
