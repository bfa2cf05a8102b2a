// The services, built once per process and handed to everything that acts for a caller: the
// HTTP app, the realtime layer and the admin CLI. Building them in one place means they all
// share one AccessEvents, so a revocation made through any of them ends live connections;
// the constructors require it, so leaving it out is a type error, not revocation turned off.
import { systemClock, type Clock } from '../clock.js'
import type { Quotas } from '../config.js'
import type { Store } from '../store/types.js'
import { AccessEvents } from './access-events.js'
import { Accounts } from './accounts.js'
import { Identities } from './identity.js'
import { Keys } from './keys.js'
import { LiveFeed } from './live-feed.js'
import { Projects } from './projects.js'
import { ProjectSchemas } from './schemas.js'

export interface Services {
  /** Revocations, removed members and deleted projects, for the realtime layer to act on. */
  accessEvents: AccessEvents
  accounts: Accounts
  identities: Identities
  keys: Keys
  projects: Projects
  schemas: ProjectSchemas
  /** Changes and access events for Server-Sent Events streams (fed by the store, the services and other nodes). */
  liveFeed: LiveFeed
}

export interface ServiceOptions {
  store: Store
  sessionTtlMs: number
  /** MAX_KEYS_PER_USER and MAX_PROJECTS_PER_USER. */
  quotas: Quotas
  /** SCHEMA_LIMIT: the largest content schema, in bytes of its JSON. */
  schemaLimitBytes: number
  /** Tests pass a clock they move; the process uses the system's. */
  now?: Clock
}

export function createServices ({ store, sessionTtlMs, quotas, schemaLimitBytes, now = systemClock }: ServiceOptions): Services {
  const accessEvents = new AccessEvents()
  const projects = new Projects(store, accessEvents, now, quotas.projectsPerUser)
  return {
    accessEvents,
    accounts: new Accounts(store, accessEvents, sessionTtlMs, now),
    identities: new Identities(store, now),
    keys: new Keys(store, projects, accessEvents, now, quotas.keysPerUser),
    projects,
    schemas: new ProjectSchemas(store, now, schemaLimitBytes),
    liveFeed: new LiveFeed(store, accessEvents)
  }
}
