// "@alice/demo" (or "alice/demo") → its parts, the way the server reads them.
const PROJECT_REF = /^@?([a-zA-Z0-9-]{1,39})\/([a-z0-9][a-z0-9_-]{0,63})$/

export interface ProjectRef {
  owner: string
  slug: string
  /** Canonical form, as change events carry it: "@alice/demo". */
  ref: string
}

export function parseProjectRef (ref: string): ProjectRef {
  const match = PROJECT_REF.exec(ref)
  if (!match) throw new TypeError(`contentd client: "${ref}" is not a project reference like "@alice/demo"`)
  const owner = (match[1] as string).toLowerCase()
  const slug = match[2] as string
  return { owner, slug, ref: `@${owner}/${slug}` }
}
