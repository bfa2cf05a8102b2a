// Server features being built elsewhere (docs/design.md §9–§14). Each one gates a route, a
// panel or a snippet of the console: while `available` is false it stays out of the
// navigation, and its route (typed by hand) says what it waits for. Whoever lands the
// server side sets `available` and builds the panel in the place named here.
export const UPCOMING = {
  /** Change log: the History tab (timeline, filter by path, view at a version, diff, revert). */
  history: { available: false, issue: 13, what: 'the change log (docs/design.md §9)' },
  /** Server-Sent Events at …/content/events: the EventSource snippet of the Connect tab. */
  events: { available: false, issue: 13, what: 'Server-Sent Events (docs/design.md §9)' },
  /** Webhooks: the Webhooks tab (list, create with the secret shown once, deliveries, test). */
  webhooks: { available: false, issue: 15, what: 'webhooks (docs/design.md §11)' },
  /** Content schema: the Schema tab (edit, validate, errors inline). */
  schema: { available: false, issue: 16, what: 'the content schema (docs/design.md §12)' },
  /** Narrowed keys (paths, ops): the fields in the key form (keys-page.tsx). */
  keyNarrowing: { available: false, issue: 16, what: 'narrowed keys (docs/design.md §12)' },
  /** Presence: avatars in the project header (project-page.tsx). */
  presence: { available: false, issue: 19, what: 'presence (docs/design.md §14)' }
} as const

export type UpcomingFeature = keyof typeof UPCOMING
