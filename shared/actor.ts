// Who is behind a connection or a change, as other people may see it (docs/design.md §9,
// §14): a user by name when they use a session, an API key by its id and name. Never a
// secret: no token, no key, no hash of either.
export type Actor =
  | { type: 'user', name: string }
  | { type: 'key', id: string, name: string }
  // An app user (docs/design.md §17): the `sub` of the app's own token.
  | { type: 'app', sub: string }
