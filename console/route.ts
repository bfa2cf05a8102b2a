// The console's places, as hash routes, so that a reload or a shared link keeps the place:
//   #/                          projects
//   #/new                       create a project
//   #/keys                      API keys
//   #/@alice/demo/content       a project's tab (content, connect, members, settings, …)
// Pure functions: test/console/pure.test.ts covers them.
import { formatProjectRef, PROJECT_REF_PARTS } from '../shared/project-ref.js'

export type ProjectTab = 'content' | 'connect' | 'members' | 'settings' | 'history' | 'webhooks' | 'schema' | 'rules' | 'query'

export interface TabInfo {
  id: ProjectTab
  label: string
  /** Only the project's owner can use it (the others see why). */
  ownerOnly: boolean
}

/** Every project tab, in navigation order. */
export const PROJECT_TABS: readonly TabInfo[] = [
  { id: 'content', label: 'Content', ownerOnly: false },
  { id: 'history', label: 'History', ownerOnly: false },
  { id: 'query', label: 'Query', ownerOnly: false },
  { id: 'connect', label: 'Connect', ownerOnly: false },
  { id: 'schema', label: 'Schema', ownerOnly: true },
  { id: 'rules', label: 'Rules', ownerOnly: true },
  { id: 'webhooks', label: 'Webhooks', ownerOnly: true },
  { id: 'members', label: 'Members', ownerOnly: true },
  { id: 'settings', label: 'Settings', ownerOnly: true }
]

export type Route =
  | { page: 'projects' }
  | { page: 'new-project' }
  | { page: 'keys' }
  | { page: 'project', project: string, tab: ProjectTab }
  | { page: 'not-found', hash: string }

const PROJECT = new RegExp(`^#\\/@(${PROJECT_REF_PARTS.owner})\\/(${PROJECT_REF_PARTS.slug})(?:\\/([a-z]+))?\\/?$`)

export function parseRoute (hash: string): Route {
  const clean = decodeURIComponent(hash || '#/')
  if (clean === '#' || clean === '#/' || clean === '') return { page: 'projects' }
  if (clean === '#/new') return { page: 'new-project' }
  if (clean === '#/keys') return { page: 'keys' }
  const match = PROJECT.exec(clean)
  if (match) {
    const tab = (match[3] ?? 'content') as ProjectTab
    if (PROJECT_TABS.some(t => t.id === tab)) return { page: 'project', project: formatProjectRef(match[1] as string, match[2] as string), tab }
  }
  return { page: 'not-found', hash: clean }
}

export function hrefOf (route: Route): string {
  switch (route.page) {
    case 'projects': return '#/'
    case 'new-project': return '#/new'
    case 'keys': return '#/keys'
    case 'project': return `#/${route.project}/${route.tab}`
    case 'not-found': return route.hash
  }
}

/** The page's title for a route, e.g. "Content · @alice/demo · contentd". */
export function titleOf (route: Route): string {
  switch (route.page) {
    case 'projects': return 'Projects · contentd'
    case 'new-project': return 'New project · contentd'
    case 'keys': return 'API keys · contentd'
    case 'project': return `${PROJECT_TABS.find(t => t.id === route.tab)?.label ?? ''} · ${route.project} · contentd`
    case 'not-found': return 'Not found · contentd'
  }
}
