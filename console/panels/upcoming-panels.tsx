// What the tab of a server feature shows on a server without it (features.ts): a tab typed in
// by hand says so, instead of showing anything made up. History, Webhooks and Schema are
// wired (history-panel.tsx, webhooks-panel.tsx, schema-panel.tsx).
import { UPCOMING, type UpcomingFeature } from '../features.js'
import { EmptyState } from '../ui.js'

/** What a tab of an upcoming feature shows on a server without it. */
export function NotAvailable ({ label, feature }: { label: string, feature: UpcomingFeature }) {
  const info = UPCOMING[feature]
  return (
    <EmptyState title={`${label} is not available on this server`} icon="…">
      <p>This needs {info.what}, which this version of contentd does not have yet (issue {info.issue}).</p>
    </EmptyState>
  )
}
