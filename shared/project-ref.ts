// Project references, "@alice/demo" (the "@" optional): one rule for the server's services,
// the request schemas and the client SDK. No dependencies, so browsers can load it as is.
export const PROJECT_REF = /^@?([a-zA-Z0-9-]{1,39})\/([a-z0-9][a-z0-9_-]{0,63})$/

/** Its parts, the owner lower-cased (usernames are case-insensitive); null when malformed. */
export function splitProjectRef (ref: string): { owner: string, slug: string } | null {
  const match = PROJECT_REF.exec(ref)
  return match ? { owner: (match[1] as string).toLowerCase(), slug: match[2] as string } : null
}
