// The panels of features being built on other branches: Schema (issue 16); History and
// Webhooks are wired (history-panel.tsx, webhooks-panel.tsx). Each is routed (route.ts),
// gated by the server's answer to its probe (features.ts), and laid out here with the parts
// issue 17 asks for, so that wiring one up means filling in its sections with the endpoints
// its feature adds. None shows data until then: the console never invents a schema.
import { UPCOMING, type UpcomingFeature } from '../features.js'
import { EmptyState } from '../ui.js'

interface PanelPlan {
  feature: UpcomingFeature
  title: string
  /** The sections the panel will have, each with the endpoints (docs/design.md) it uses. */
  sections: Array<{ id: string, title: string, uses: string }>
}

export const PANEL_PLANS = {
  schema: {
    feature: 'schema',
    title: 'Schema',
    sections: [
      { id: 'editor', title: 'JSON Schema', uses: 'GET / PUT / DELETE …/schema; INVALID_SCHEMA and SCHEMA_VIOLATION errors shown at the text' }
    ]
  }
} as const satisfies Record<string, PanelPlan>

export type PanelName = keyof typeof PANEL_PLANS

/** What a tab of an upcoming feature shows on a server without it. */
export function NotAvailable ({ label, feature }: { label: string, feature: UpcomingFeature }) {
  const info = UPCOMING[feature]
  return (
    <EmptyState title={`${label} is not available on this server`} icon="…">
      <p>This needs {info.what}, which this version of contentd does not have yet (issue {info.issue}).</p>
    </EmptyState>
  )
}

/**
 * An upcoming feature's panel on a server that has it. Until its sections are wired to the
 * SDK, it says so instead of showing anything made up. Wiring one: replace this in
 * project-page.tsx's TabBody with the real panel, built section by section from its plan.
 */
export function UpcomingPanel ({ name }: { name: PanelName }) {
  const plan: PanelPlan = PANEL_PLANS[name]
  return (
    <EmptyState title={`This server has ${UPCOMING[plan.feature].what}`} icon="…">
      <p>The console's {plan.title} tab is not wired to it yet (issue 17). Until then, use the API: <a href="/docs">/docs</a>.</p>
      <ul class="plan">
        {plan.sections.map(s => <li key={s.id}><strong>{s.title}</strong>: <span class="mono">{s.uses}</span></li>)}
      </ul>
    </EmptyState>
  )
}
