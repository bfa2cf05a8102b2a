// The console's shell: signed out, the sign-in page; signed in, a header, the project list
// and the page the hash route names. Changing the route moves focus to the new page's
// heading, so keyboard and screen-reader users land where the content starts.
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks'
import type { CreatedApiKey, ProjectSummary, SessionGrant } from '../shared/client/index.js'
import { AppContext, useApp, type AppContextValue } from './app-context.js'
import { AuthPage } from './auth-page.js'
import { ExternalIcon, KeyIcon } from './icons.js'
import { KeysPage } from './keys-page.js'
import { NewProjectPage, ProjectsPage } from './projects-page.js'
import { ProjectPage } from './project-page.js'
import { hrefOf, parseRoute, titleOf, type Route } from './route.js'
import { forgetSession, isSessionEnded, messageOf, openSession, restoreSession, type Session } from './session.js'
import { EmptyState } from './ui.js'

function useRoute (): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash))
  useEffect(() => {
    const update = () => setRoute(parseRoute(location.hash))
    addEventListener('hashchange', update)
    return () => removeEventListener('hashchange', update)
  }, [])
  return route
}

export function App () {
  const [session, setSession] = useState<Session | null>(() => restoreSession())
  const [notice, setNotice] = useState<string | null>(null)
  const route = useRoute()

  useEffect(() => { document.title = session ? titleOf(route) : 'Sign in · contentd' }, [route, session])

  const signIn = (grant: SessionGrant) => {
    setNotice(null)
    setSession(openSession(grant))
  }
  const endSession = useCallback((message: string | null) => {
    setSession(current => { forgetSession(current); return null })
    setNotice(message)
  }, [])

  if (!session) return <AuthPage onSignedIn={signIn} notice={notice} />
  return <SignedIn key={session.token} session={session} route={route} endSession={endSession} />
}

function SignedIn ({ session, route, endSession }: { session: Session, route: Route, endSession: (message: string | null) => void }) {
  const [projects, setProjects] = useState<ProjectSummary[] | null>(null)
  const [projectsError, setProjectsError] = useState<string | null>(null)
  const [status, setStatus] = useState('')
  const [menuOpen, setMenuOpen] = useState(false)
  const [createdKeys, setCreatedKeys] = useState<CreatedApiKey[]>([])

  const failure = useCallback((error: unknown) => {
    if (isSessionEnded(error)) endSession('Your session ended. Please sign in again.')
    return messageOf(error)
  }, [endSession])

  const shownProjects = useRef('')
  const reloadProjects = useCallback(async () => {
    try {
      const found = await session.client.projects()
      setProjectsError(null)
      const text = JSON.stringify(found)
      if (text === shownProjects.current) return false
      shownProjects.current = text
      setProjects(found)
      return true
    } catch (e) {
      setProjectsError(failure(e))
      return false
    }
  }, [session, failure])

  useEffect(() => { void reloadProjects() }, [reloadProjects])
  // A confirmation stays a few seconds; the live region has announced it by then.
  useEffect(() => {
    if (status === '') return
    const timer = setTimeout(() => setStatus(''), 6000)
    return () => clearTimeout(timer)
  }, [status])
  // Whatever page the route shows, the menu (on phones) closes.
  useEffect(() => setMenuOpen(false), [route])

  const app = useMemo<AppContextValue>(() => ({
    session,
    projects,
    projectsError,
    reloadProjects,
    navigate: next => { location.hash = hrefOf(next) },
    announce: setStatus,
    failure,
    createdKeys,
    rememberKey: key => setCreatedKeys(keys => [key, ...keys])
  }), [session, projects, projectsError, reloadProjects, failure, createdKeys])

  const signOut = async () => {
    try { await session.client.logout() } catch { /* the session may be gone already */ }
    endSession('You are signed out.')
  }

  return (
    <AppContext value={app}>
      <a class="skip" href="#main" onClick={e => { e.preventDefault(); document.getElementById('main')?.focus() }}>Skip to content</a>
      <header class="topbar">
        <button type="button" class="button ghost menu-button" aria-expanded={menuOpen} aria-controls="sidebar" onClick={() => setMenuOpen(open => !open)}>
          <span aria-hidden="true">☰</span> Menu
        </button>
        <a class="brand" href="#/"><span class="logo" aria-hidden="true">{'{·}'}</span> contentd</a>
        <p class="status-line" role="status" aria-live="polite">{status}</p>
        <div class="account">
          <a class="button ghost small" href="/docs" target="_blank" rel="noopener">API docs</a>
          <span class="whoami" title="Signed in as">{session.username}</span>
          <button type="button" class="button ghost small" onClick={signOut}>Sign out</button>
        </div>
      </header>
      <div class={`layout${menuOpen ? ' menu-open' : ''}`}>
        <Sidebar route={route} />
        <Page route={route} />
      </div>
    </AppContext>
  )
}

function Sidebar ({ route }: { route: Route }) {
  const { projects, projectsError, session } = useApp()
  const current = route.page === 'project' ? route.project : null
  return (
    <nav id="sidebar" class="sidebar" aria-label="Projects and account">
      <div class="sidebar-head">
        <a href="#/" class="sidebar-title" aria-current={route.page === 'projects' ? 'page' : undefined}>Projects</a>
        <a href="#/new" class="button small primary" aria-current={route.page === 'new-project' ? 'page' : undefined}>+ New</a>
      </div>
      {projectsError && <p class="field-error">{projectsError}</p>}
      {projects && projects.length === 0 && <p class="sidebar-empty">No projects yet.</p>}
      <ul class="project-links">
        {(projects ?? []).map(p => {
          const ref = `${p.username}/${p.slug}`
          const mine = p.username === session.username
          return (
            <li key={ref}>
              <a href={hrefOf({ page: 'project', project: ref, tab: 'content' })} aria-current={current === ref ? 'page' : undefined}>
                <span class="project-link-name">{mine ? p.slug : ref}</span>
                {p.role !== 'owner' && <span class="role-dot">{p.role}</span>}
              </a>
            </li>
          )
        })}
      </ul>
      <div class="sidebar-section">
        <a href="#/keys" class="sidebar-link" aria-current={route.page === 'keys' ? 'page' : undefined}><KeyIcon /> API keys</a>
        <a href="/docs" class="sidebar-link" target="_blank" rel="noopener"><ExternalIcon /> API reference</a>
      </div>
    </nav>
  )
}

function Page ({ route }: { route: Route }) {
  const main = useRef<HTMLElement>(null)
  // Focus the page's heading after a route change (not on the first render).
  const first = useRef(true)
  useEffect(() => {
    if (first.current) { first.current = false; return }
    const heading = main.current?.querySelector<HTMLElement>('h1, h2')
    if (heading) { heading.tabIndex = -1; heading.focus({ preventScroll: false }) }
  }, [hrefOf(route)])
  return (
    <main id="main" class="main" ref={main} tabIndex={-1}>
      {route.page === 'projects' && <ProjectsPage />}
      {route.page === 'new-project' && <NewProjectPage />}
      {route.page === 'keys' && <KeysPage />}
      {route.page === 'project' && <ProjectPage key={route.project} project={route.project} tab={route.tab} />}
      {route.page === 'not-found' && (
        <EmptyState title="Nothing here" icon="?" actions={<a class="button primary" href="#/">Go to your projects</a>}>
          <p>The console has no page at <code>{route.hash}</code>.</p>
        </EmptyState>
      )}
    </main>
  )
}
