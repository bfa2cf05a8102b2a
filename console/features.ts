// Server features being built on other branches (docs/design.md §9–§14). The console asks
// the server which of them it has, once per project page: each probed feature has a read
// endpoint, and a server without it answers that endpoint with 404 NOT_FOUND ("No such
// endpoint"; docs/errors.md). Anything else (200, 403, or a 404 of the feature's own, such
// as SCHEMA_NOT_FOUND) means the endpoint exists. Until a feature answers, its tab stays out
// of the navigation, and its route (typed by hand) says "not available on this server".
//
// The probe asks the server a question about itself, with a plain fetch (it reads status
// codes, and cuts a stream off); the panels talk to the features through the SDK's methods.
// Presence (Socket.IO events) and key narrowing (fields of POST /api/keys) have no endpoint
// to probe without side effects: they stay off until whoever lands them sets `static`.

export interface FeatureInfo {
  issue: number
  /** What it needs, for the "not available" text. */
  what: string
  /** The read endpoint that exists exactly when the feature does, below /api/@user/slug. */
  probe?: string
  /** For a feature that cannot be probed: whether this build of the console assumes it. */
  static?: boolean
}

export const UPCOMING = {
  /** Change log: the History tab (history-panel.tsx). */
  history: { issue: 13, what: 'the change log (docs/design.md §9)', probe: '/content/changes?limit=1' },
  /** Server-Sent Events at …/content/events: the EventSource snippet of the Connect tab. */
  events: { issue: 13, what: 'Server-Sent Events (docs/design.md §9)', probe: '/content/events' },
  /** Webhooks: the Webhooks tab (webhooks-panel.tsx). */
  webhooks: { issue: 15, what: 'webhooks (docs/design.md §11)', probe: '/webhooks' },
  /** Content schema: the Schema tab (schema-panel.tsx). */
  schema: { issue: 16, what: 'the content schema (docs/design.md §12)', probe: '/schema' },
  /** Narrowed keys (paths, ops): the fields in the key form (keys-page.tsx). */
  keyNarrowing: { issue: 16, what: 'narrowed keys (docs/design.md §12)', static: false },
  /** Presence: "Viewing now" on the Content tab (content/viewing-now.tsx). */
  presence: { issue: 19, what: 'presence (docs/design.md §14)', static: true }
} as const satisfies Record<string, FeatureInfo>

export type UpcomingFeature = keyof typeof UPCOMING

/** Which upcoming features the server has; a feature not yet probed counts as absent. */
export type Availability = Partial<Record<UpcomingFeature, boolean>>

/** The static answers, for what cannot be probed. */
export function staticAvailability (): Availability {
  const known: Availability = {}
  for (const [name, info] of Object.entries(UPCOMING) as Array<[UpcomingFeature, FeatureInfo]>) {
    if (info.static !== undefined) known[name] = info.static
  }
  return known
}

/** Whether an answer to a probe says the endpoint exists. */
export function endpointExists (status: number, body: unknown): boolean {
  if (status === 404) return !(typeof body === 'object' && body !== null && (body as { code?: unknown }).code === 'NOT_FOUND')
  return status !== 405
}

/**
 * Asks the server about every probed feature of a project, in parallel. A feature whose
 * probe fails to arrive (network) counts as absent. Streams (events) are cut off as soon as
 * their status is known.
 */
export async function probeFeatures (origin: string, project: string, token: string, fetchImpl: typeof fetch = fetch): Promise<Availability> {
  const found = staticAvailability()
  await Promise.all((Object.entries(UPCOMING) as Array<[UpcomingFeature, FeatureInfo]>).map(async ([name, info]) => {
    if (info.probe === undefined) return
    const stop = new AbortController()
    try {
      const response = await fetchImpl(`${origin}/api/${project}${info.probe}`, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' }, signal: stop.signal })
      const json = response.headers.get('content-type')?.includes('application/json') === true
      const body: unknown = json ? await response.json().catch(() => undefined) : undefined
      found[name] = endpointExists(response.status, body)
    } catch {
      found[name] = false
    } finally {
      stop.abort()
    }
  }))
  return found
}
