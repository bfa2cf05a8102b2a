// The panels of features being built on other branches: History (issue 13), Webhooks (15)
// and Schema (16). Each is routed (route.ts), gated by the server's answer to its probe
// (features.ts), and laid out here with the parts issue 17 asks for, so that wiring one up
// means filling in its sections with the SDK methods its feature adds. None shows data
// until then: the console never invents history, webhooks or schemas.
import { UPCOMING, type UpcomingFeature } from '../features.js'
import { EmptyState } from '../ui.js'

interface PanelPlan {
  feature: UpcomingFeature
  title: string
  /** The sections the panel will have, each with the endpoints (docs/design.md) it uses. */
  sections: Array<{ id: string, title: string, uses: string }>
}

export const PANEL_PLANS = {
  history: {
    feature: 'history',
    title: 'History',
    sections: [
      { id: 'timeline', title: 'Timeline', uses: 'GET …/content/changes?since&limit (actor, time, op, path), filtered by path' },
      { id: 'at-version', title: 'The content at a version', uses: 'GET …/content?version=N, diffed against the live content' },
      { id: 'revert', title: 'Revert to this version', uses: 'POST …/content/revert {version}' }
    ]
  },
  webhooks: {
    feature: 'webhooks',
    title: 'Webhooks',
    sections: [
      { id: 'list', title: 'Webhooks', uses: 'GET …/webhooks; DELETE …/webhooks/:id' },
      { id: 'create', title: 'Add a webhook', uses: 'POST …/webhooks {url, paths?, ops?, description?} (secret shown once)' },
      { id: 'deliveries', title: 'Deliveries', uses: 'GET …/webhooks/:id/deliveries; POST …/webhooks/:id/test' }
    ]
  },
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
