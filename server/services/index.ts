// The services, built once per process and handed to everything that acts for a caller: the
// HTTP app, the realtime layer and the admin CLI. Building them in one place means they all
// share one AccessEvents, so a revocation made through any of them ends live connections;
// the constructors require it, so leaving it out is a type error, not revocation turned off.
import { systemClock, type Clock } from '../clock.js'
import type { Quotas } from '../config.js'
import { ChangeFeed } from '../feed/change-feed.js'
import type { Store } from '../store/types.js'
import { AccessEvents } from './access-events.js'
import { Accounts } from './accounts.js'
import { Identities } from './identity.js'
import { Keys } from './keys.js'
import { OpenStreams } from './open-streams.js'
import { Projects } from './projects.js'
import { QueryHub, type QueryLimits } from '../queries/query-hub.js'
import { ProjectSchemas } from './schemas.js'
import { AppRules, type AppRulesOptions } from './app-rules.js'
import { UnsentBudget, type UnsentLimits } from './unsent-budget.js'

export interface Services {
  /** Revocations, removed members and deleted projects, for the realtime layer to act on. */
  accessEvents: AccessEvents
  accounts: Accounts
  identities: Identities
  keys: Keys
  projects: Projects
  schemas: ProjectSchemas
  /**
   * The change feed (server/feed/): committed changes and access events, this node's and,
   * once a relay is attached (server/node.ts), the other nodes'. Every transport reads it.
   */
  feed: ChangeFeed
  /** The Server-Sent Events streams open on this node (shutdown, per-user bound, access re-check). */
  openStreams: OpenStreams
  /** What SSE streams and Socket.IO connections together may hold unsent (docs/design.md §13b). */
  unsentBudget: UnsentBudget
  /** Live queries (docs/design.md §16): one shared result per distinct query, for Socket.IO and SSE. */
  queries: QueryHub
  /**
   * [rules, issue 31] App users and rules (docs/design.md §17), one per process so every
   * transport shares what it keeps; absent where nothing takes app users (the CLI).
   */
  appRules?: AppRules
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
  /**
   * SLOW_CLIENT_BYTES_PER_USER and SLOW_CLIENT_BYTES (config.slowClientBytes). The server
   * passes them; without them (the CLI, which streams nothing) nothing is bounded.
   */
  slowClientBytes?: UnsentLimits
  /** QUERY_RESULTS_PER_PROJECT (config.queries); the default without it (the CLI runs no queries). */
  queryLimits?: QueryLimits
  /** [rules, issue 31] With it, app users' tokens and rules (the server passes them; the CLI does not). */
  appRules?: Omit<AppRulesOptions, 'store' | 'accessEvents'>
}

const UNBOUNDED: UnsentLimits = { perUser: Number.POSITIVE_INFINITY, perProcess: Number.POSITIVE_INFINITY }

export function createServices ({ store, sessionTtlMs, quotas, schemaLimitBytes, now = systemClock, slowClientBytes = UNBOUNDED, queryLimits = { resultsPerProject: 100 }, appRules: rulesOptions }: ServiceOptions): Services {
  const accessEvents = new AccessEvents()
  const projects = new Projects(store, accessEvents, now, quotas.projectsPerUser)
  const feed = new ChangeFeed(store, accessEvents)
  // Hears changes of rules from every node before any stream does (listeners run in order).
  const appRules = rulesOptions ? new AppRules({ ...rulesOptions, store, accessEvents }) : undefined
  if (appRules) feed.onAccess(event => appRules.heard(event))
  return {
    ...(appRules ? { appRules } : {}),
    accessEvents,
    accounts: new Accounts(store, accessEvents, sessionTtlMs, now),
    identities: new Identities(store, now),
    keys: new Keys(store, projects, accessEvents, now, quotas.keysPerUser),
    projects,
    schemas: new ProjectSchemas(store, now, schemaLimitBytes),
    feed,
    openStreams: new OpenStreams(),
    unsentBudget: new UnsentBudget(slowClientBytes),
    queries: new QueryHub(store, feed, queryLimits)
  }
}
