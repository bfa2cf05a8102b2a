// What every page of the signed-in console shares, through one Preact context.
import { createContext } from 'preact'
import { useContext } from 'preact/hooks'
import type { CreatedApiKey, ProjectSummary } from '../shared/client/index.js'
import type { Route } from './route.js'
import type { Session } from './session.js'

export interface AppContextValue {
  session: Session
  /** The projects the user can see (null while loading). */
  projects: ProjectSummary[] | null
  projectsError: string | null
  /** Re-reads the list; says whether it differs from the one shown. */
  reloadProjects (): Promise<boolean>
  navigate (route: Route): void
  /** A short confirmation for screen readers and the status line ("Key revoked."). */
  announce (message: string): void
  /**
   * For a failure of an SDK call: signs out when the session ended, and returns the sentence
   * to show next to what failed.
   */
  failure (error: unknown): string
  /** Keys created in this tab, with their secrets, for the Connect snippets. Memory only. */
  createdKeys: CreatedApiKey[]
  rememberKey (key: CreatedApiKey): void
}

export const AppContext = createContext<AppContextValue | null>(null)

export function useApp (): AppContextValue {
  const app = useContext(AppContext)
  if (!app) throw new Error('useApp outside the signed-in console')
  return app
}
