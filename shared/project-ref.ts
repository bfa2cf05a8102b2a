// Project references, "@alice/demo" (the "@" optional): one rule for the server's services,
// the request schemas, the realtime payloads, the client SDK and the console's routes — how
// one is read and how one is written. No dependencies, so browsers can load it as is.
const OWNER = '[a-zA-Z0-9-]{1,39}'
const SLUG = '[a-z0-9][a-z0-9_-]{0,63}'

export const PROJECT_REF = new RegExp(`^@?(${OWNER})\\/(${SLUG})$`)

/** The owner's and the slug's patterns, for a pattern with a reference inside (the console's `#/@alice/demo/tab`). */
export const PROJECT_REF_PARTS = { owner: OWNER, slug: SLUG } as const

/** Its parts, the owner lower-cased (usernames are case-insensitive); null when malformed. */
export function splitProjectRef (ref: string): { owner: string, slug: string } | null {
  const match = PROJECT_REF.exec(ref)
  return match ? { owner: (match[1] as string).toLowerCase(), slug: match[2] as string } : null
}

/**
 * The two halves around the first "/", not yet validated (the owner keeps its "@" when it
 * has one); null unless both are non-empty. For the realtime payloads, whose halves are then
 * checked one by one with the same codes as the URL of an HTTP request.
 */
export function projectRefHalves (ref: unknown): { owner: string, slug: string } | null {
  if (typeof ref !== 'string') return null
  const slash = ref.indexOf('/')
  if (slash <= 0 || slash === ref.length - 1) return null
  return { owner: ref.slice(0, slash), slug: ref.slice(slash + 1) }
}

/** The canonical form, "@alice/demo", as change events carry it: owner (with or without "@", any case) and slug. */
export function formatProjectRef (owner: string, slug: string): string {
  return `@${owner.replace(/^@/, '').toLowerCase()}/${slug}`
}
