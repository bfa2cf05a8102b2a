// The one human line printed when the server listens (docs/design.md §13), e.g.
//   contentd listening on http://127.0.0.1:3000 — dashboard /, API docs /docs — data in ./data (sqlite)
// A URL one can open (a wildcard address shows as localhost) and where the data lives,
// without the credentials a MONGODB_URI may hold.
import type { Config } from './config.js'
import { databaseNameFrom, uriParts } from './store/mongodb/uri.js'

const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '[::]'])

export function listeningLine (config: Pick<Config, 'host' | 'store' | 'dataDir' | 'mongodbUri'>, port: number): string {
  return `contentd listening on ${baseUrl(config.host, port)} — dashboard /, API docs /docs — data in ${dataLocation(config)}`
}

function baseUrl (host: string, port: number): string {
  if (WILDCARD_HOSTS.has(host)) return `http://localhost:${port}`
  // An IPv6 literal needs brackets in a URL.
  return host.includes(':') && !host.startsWith('[') ? `http://[${host}]:${port}` : `http://${host}:${port}`
}

/** Where the data lives, e.g. "./data (sqlite)"; also what the CLI prints (server/cli/main.ts). */
export function dataLocation (config: Pick<Config, 'store' | 'dataDir' | 'mongodbUri'>): string {
  if (config.store === 'mongodb') {
    const uri = config.mongodbUri ?? ''
    const { hosts } = uriParts(uri)
    return `MongoDB ${databaseNameFrom(uri)}${hosts === '' ? '' : ` at ${hosts}`} (mongodb)`
  }
  return `${config.dataDir} (sqlite)`
}
