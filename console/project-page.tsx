// One project: its header (name, role, live state, version), its tabs, and the open tab.
// The live copy of the content is taken here, so it stays live while the user moves
// between tabs, and the header shows its version wherever they are.
import { useEffect, useMemo, useState } from 'preact/hooks'
import type { ConnectionState, ProjectSummary } from '../shared/client/index.js'
import { useApp } from './app-context.js'
import { ConnectPage } from './connect-page.js'
import { ContentPage } from './content/content-page.js'
import { LiveDocument } from './content/live-document.js'
import { KeyIcon } from './icons.js'
import { MembersPage } from './members-page.js'
import { HistoryPanel } from './panels/history-panel.js'
import { RulesPanel } from './panels/rules-panel.js'
import { SchemaPanel } from './panels/schema-panel.js'
import { QueryPanel } from './panels/query-panel.js'
import { WebhooksPanel } from './panels/webhooks-panel.js'
import { hrefOf, PROJECT_TABS, type ProjectTab } from './route.js'
import { SettingsPage } from './settings-page.js'
import { Badge, EmptyState, Loading } from './ui.js'

export function ProjectPage ({ project, tab }: { project: string, tab: ProjectTab }) {
  const { session, failure } = useApp()
  const [info, setInfo] = useState<ProjectSummary | null>(null)
  const [error, setError] = useState<string | null>(null)
  const client = useMemo(() => session.client.project(project), [session, project])
  const doc = useMemo(() => new LiveDocument(client), [client])

  useEffect(() => {
    let current = true
    client.info().then(found => { if (current) setInfo(found) }, e => { if (current) setError(failure(e)) })
    return () => { current = false }
  }, [client, failure])

  useEffect(() => {
    if (!info) return
    doc.start()
    return () => { doc.close() }
  }, [doc, info])

  if (error) {
    return (
      <EmptyState title={`Cannot open ${project}`} icon="!" actions={<a class="button primary" href="#/">Back to your projects</a>}>
        <p>{error}</p>
      </EmptyState>
    )
  }
  if (!info) return <Loading what={project} />

  const role = info.role ?? 'viewer'
  return (
    <section class="page project" aria-labelledby="project-heading">
      <div class="project-head">
        <div class="project-title">
          <h1 id="project-heading">{info.name}</h1>
          <span class="mono project-ref">{project}</span>
          <Badge tone={role === 'owner' ? 'accent' : 'plain'}>{role}</Badge>
        </div>
        <LiveBadge doc={doc} />
      </div>
      <nav class="tabs" aria-label={`${project} sections`}>
        {PROJECT_TABS.map(t => (
          <a key={t.id} href={hrefOf({ page: 'project', project, tab: t.id })} aria-current={t.id === tab ? 'page' : undefined}>{t.label}</a>
        ))}
      </nav>
      <div class="tab-body">
        <TabBody tab={tab} project={project} info={info} doc={doc} onSchema={hasSchema => setInfo({ ...info, hasSchema })} onRules={hasRules => setInfo({ ...info, hasRules })} onAppAuth={hasAppAuth => setInfo({ ...info, hasAppAuth })} />
      </div>
    </section>
  )
}

interface TabBodyProps {
  tab: ProjectTab
  project: string
  info: ProjectSummary
  doc: LiveDocument
  /** The Schema tab set or removed the schema: info.hasSchema follows, so no tab asks for a 404. */
  onSchema: (hasSchema: boolean) => void
  /** The Rules tab saved or removed the rules: info.hasRules follows, likewise. */
  onRules: (hasRules: boolean) => void
  onAppAuth: (hasAppAuth: boolean) => void
}

function TabBody ({ tab, project, info, doc, onSchema, onRules, onAppAuth }: TabBodyProps) {
  const role = info.role ?? 'viewer'
  const tabInfo = PROJECT_TABS.find(t => t.id === tab)
  if (tabInfo?.ownerOnly && role !== 'owner') {
    return (
      <EmptyState title={`Only the owner manages ${tabInfo.label.toLowerCase()}`} icon={<KeyIcon />}>
        <p>You are {role === 'editor' ? 'an editor' : 'a viewer'} of {project}. Ask {info.username} for changes.</p>
      </EmptyState>
    )
  }
  switch (tab) {
    case 'content': return <ContentPage doc={doc} canWrite={role !== 'viewer'} project={project} schemaReadable={role === 'owner' && info.hasSchema === true} />
    case 'connect': return <ConnectPage project={project} role={role} />
    case 'members': return <MembersPage project={project} owner={info.username} />
    case 'settings': return <SettingsPage info={info} project={project} />
    case 'history': return <HistoryPanel doc={doc} canWrite={role !== 'viewer'} />
    case 'webhooks': return <WebhooksPanel project={project} />
    case 'schema': return <SchemaPanel doc={doc} hasSchema={info.hasSchema === true} onSchema={onSchema} />
    // A server that does not say (older than hasRules) is asked: a 404 then reads as none.
    case 'rules': return <RulesPanel project={doc.project} hasRules={info.hasRules ?? true} hasAppAuth={info.hasAppAuth ?? true} onRules={onRules} onAppAuth={onAppAuth} />
    case 'query': return <QueryPanel doc={doc} />
  }
}

const CONNECTION_TEXT: Record<ConnectionState, string> = { idle: 'Starting', connecting: 'Connecting…', online: 'Live', offline: 'Offline' }

function LiveBadge ({ doc }: { doc: LiveDocument }) {
  const { session } = useApp()
  const [connection, setConnection] = useState<ConnectionState>(session.client.connection)
  const [, setFrame] = useState(0)
  useEffect(() => session.client.onConnection(setConnection), [session])
  // Only the badge follows every new version (at most once a frame), not the whole page.
  useEffect(() => doc.onUpdate(() => setFrame(n => n + 1)), [doc])
  const state = doc.state === 'ended' ? 'offline' : connection
  return (
    <p class="live" data-state={state}>
      <span class="dot" aria-hidden="true" />
      {/* Only the connection is announced, not every new version. */}
      <span class="live-text" role="status">{doc.state === 'ended' ? 'Stopped' : CONNECTION_TEXT[connection]}</span>
      {doc.version !== undefined && <span class="version" title="Content version">v{doc.version}</span>}
    </p>
  )
}
