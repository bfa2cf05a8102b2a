// Things that take access away from a live connection. HTTP routes change access through the
// services; the services announce it here, and the realtime layer ends the affected
// subscriptions at once (on every node, through the change feed's Redis relay when there are several).
export type AccessEvent =
  /** A session was logged out or an API key revoked: everything using it stops. */
  | { kind: 'credential-revoked', credentialHash: string }
  /** A member lost their place in a project: their subscriptions to it end. */
  | { kind: 'member-removed', projectId: string, userId: string }
  /** The project is gone: every subscription to it ends. */
  | { kind: 'project-deleted', projectId: string }
  /**
   * [rules, issue 31] The project's rules or app trust setting were set or removed: every node
   * forgets what it cached of them and re-checks its app users' live streams (docs/design.md §17).
   * It ends nothing by itself.
   */
  | { kind: 'rules-changed', projectId: string }

export type AccessListener = (event: AccessEvent) => void

export class AccessEvents {
  private readonly listeners: AccessListener[] = []

  on (listener: AccessListener): void {
    this.listeners.push(listener)
  }

  emit (event: AccessEvent): void {
    for (const listener of this.listeners) {
      // The change is already committed; a listener's failure must not turn it into an error.
      try { listener(event) } catch { /* the listener logs its own failures */ }
    }
  }
}
