// The connection string, read for people: which hosts and database, never the password.
// No driver import, so the start-up line can describe MongoDB without loading the driver.

export const DEFAULT_DATABASE = 'contentd'

interface UriParts {
  scheme: string
  hosts: string
  database: string | null
  password: string | null
}

/** Splits mongodb://user:pass@h1:27017,h2/db?opts by hand: URL cannot parse several hosts. */
export function uriParts (uri: string): UriParts {
  const schemeEnd = uri.indexOf('://')
  const scheme = schemeEnd === -1 ? '' : uri.slice(0, schemeEnd)
  let rest = schemeEnd === -1 ? uri : uri.slice(schemeEnd + 3)
  const authorityEnd = rest.search(/[/?]/)
  const authority = authorityEnd === -1 ? rest : rest.slice(0, authorityEnd)
  rest = authorityEnd === -1 ? '' : rest.slice(authorityEnd)
  const at = authority.lastIndexOf('@')
  const credentials = at === -1 ? null : authority.slice(0, at)
  const colon = credentials === null ? -1 : credentials.indexOf(':')
  const password = credentials !== null && colon !== -1 ? credentials.slice(colon + 1) : null
  const hosts = at === -1 ? authority : authority.slice(at + 1)
  const path = rest.startsWith('/') ? rest.slice(1).split('?')[0] ?? '' : ''
  let database: string | null = null
  if (path !== '') {
    try { database = decodeURIComponent(path) } catch { database = path }
  }
  return { scheme, hosts, database, password }
}

/** The database the URI names, or "contentd". */
export function databaseNameFrom (uri: string): string {
  return uriParts(uri).database ?? DEFAULT_DATABASE
}

/** "MongoDB at h1:27017,h2" (the SRV name for mongodb+srv). */
export function describeMongo (uri: string): string {
  const { hosts } = uriParts(uri)
  return `MongoDB at ${hosts === '' ? '(no host)' : hosts}`
}

/** Removes the URI's password, raw and decoded, from a message. */
export function redact (message: string, uri: string): string {
  const { password } = uriParts(uri)
  if (!password) return message
  let decoded = password
  try { decoded = decodeURIComponent(password) } catch { /* keep raw */ }
  return message.split(password).join('***').split(decoded).join('***')
}
