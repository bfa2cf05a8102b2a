// A project's content as the console shows it: the SDK's live copy (subscribe), plus what a
// view needs to update only what changed. Each change bumps a revision number on its path
// and on every ancestor, so a tree node re-renders only when something at or below it
// changed (or its value was replaced); a snapshot (the first, or after a gap or a reconnect)
// and a whole-content update start a new epoch, which re-renders everything. Updates reach
// the view at most once per animation frame, however many changes arrived in it.
import type { ChangeEvent, ContentdClientError, JsonObject, ProjectClient, Subscription } from '../../shared/client/index.js'

/** Revision numbers per path; see the module comment. Pure: test/console/live-document.test.ts. */
export class Revisions {
  /** Bumped by reset(): every node re-renders. */
  epoch = 0
  private counter = 0
  private readonly byPath = new Map<string, number>()

  of (path: string): number {
    return this.byPath.get(path) ?? 0
  }

  /** Something changed at `path` ("" for the root): it and its ancestors get a new revision. */
  touch (path: string): void {
    const revision = ++this.counter
    this.byPath.set('', revision)
    if (path === '') return
    let end = path.indexOf('.')
    while (end !== -1) {
      this.byPath.set(path.slice(0, end), revision)
      end = path.indexOf('.', end + 1)
    }
    this.byPath.set(path, revision)
  }

  reset (): void {
    this.epoch += 1
    this.byPath.clear()
  }
}

export type DocumentState = 'loading' | 'live' | 'ended'

/** How many recent changes are kept, to show what changed when an edit meets a conflict. */
const KEPT_CHANGES = 500

export class LiveDocument {
  content: JsonObject | undefined
  version: number | undefined
  state: DocumentState = 'loading'
  /** Why the subscription ended (revoked, refused), when state is 'ended'. */
  error: ContentdClientError | undefined
  readonly revisions = new Revisions()
  private readonly recent: ChangeEvent[] = []
  private readonly flashes = new Set<string>()
  private readonly listeners = new Set<() => void>()
  private subscription: Subscription | undefined
  private frameRequested = false
  /** Whether the content the SDK hands over next follows a change (else it is a snapshot). */
  private afterChange = false

  constructor (
    readonly project: ProjectClient,
    private readonly schedule: (run: () => void) => void = run => { requestAnimationFrame(() => run()) }
  ) {}

  start (): void {
    if (this.subscription) return
    // Subscribing to a painted tree, network and parsing included (read by bench/scenarios/console.mjs).
    performance.mark('contentd:subscribe')
    this.subscription = this.project.subscribe((content, version) => {
      if (!this.afterChange) {
        this.revisions.reset()
        this.flashes.clear()
        performance.mark('contentd:snapshot', { detail: { version } })
      }
      this.afterChange = false
      this.content = content
      this.version = version
      this.state = 'live'
      this.error = undefined
      this.notify()
    }, {
      onChange: change => {
        this.afterChange = true
        if (change.op === 'update') this.revisions.reset()
        else this.revisions.touch(change.path ?? '')
        this.flashes.add(change.path ?? '')
        this.recent.push(change)
        if (this.recent.length > KEPT_CHANGES) this.recent.splice(0, this.recent.length - KEPT_CHANGES)
      },
      onError: error => {
        this.state = 'ended'
        this.error = error
        this.notify()
      }
    })
  }

  close (): void {
    this.subscription?.close()
    this.subscription = undefined
    this.listeners.clear()
  }

  /** Calls `listener` (at most once per frame) after changes; returns the function that stops it. */
  onUpdate (listener: () => void): () => void {
    this.listeners.add(listener)
    return () => { this.listeners.delete(listener) }
  }

  /** The kept changes after `version`, oldest first. */
  changesSince (version: number): ChangeEvent[] {
    return this.recent.filter(change => change.version > version)
  }

  /** Paths changed since the last call, for the view to highlight. */
  takeFlashes (): string[] {
    const paths = [...this.flashes]
    this.flashes.clear()
    return paths
  }

  private notify (): void {
    if (this.frameRequested) return
    this.frameRequested = true
    this.schedule(() => {
      this.frameRequested = false
      for (const listener of [...this.listeners]) listener()
    })
  }
}
