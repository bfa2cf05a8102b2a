// `project.ref('a.b')` (docs/design.md §15): one path of a project, to read, watch live, and
// read the history of — what Firebase's `ref('a/b')` is, with resume. A key narrowed to the
// path (§12) may use all of it.
import type { Json } from '../json.js'
import type { PathChange } from '../live-path.js'
import { parsePath } from '../path.js'
import type { Http } from './http.js'
import type { PathListener, PathSubscribeOptions, PathSubscription } from './path-subscription.js'
import type { LiveContent } from './realtime.js'
import type { ProjectQuery, QueryInput } from './project.js'

/** One page of a path's history (`GET …/content/changes?path=`). */
export interface PathChangesPage {
  /** The project's version when the page was read. */
  version: number
  /** The changes that touch the path, as a path subscription is sent them. */
  changes: PathChange[]
  more: boolean
}

export class PathRef {
  /** Throws INVALID_PATH (a ContentdError) for an invalid dot path, before anything is sent. */
  constructor (
    private readonly http: Http,
    private readonly live: LiveContent,
    readonly project: string,
    private readonly contentBase: string,
    readonly path: string,
    private readonly queryAt: (path: string, query: QueryInput) => ProjectQuery
  ) {
    parsePath(path)
  }

  /**
   * A live query of the children at this path (docs/queries.md): the same as
   * `project.query(path, query)`, `get()` once or `subscribe(items => …)`.
   */
  query (query: QueryInput): ProjectQuery {
    return this.queryAt(this.path, query)
  }

  /** The value at the path; undefined when nothing is there. */
  async get<T = Json> (): Promise<T | undefined> {
    const result = await this.http.request<T>('GET', `${this.contentBase}?path=${encodeURIComponent(this.path)}`).catch((error: { code?: string }) => {
      if (error.code === 'PATH_NOT_FOUND') return undefined
      throw error
    })
    return result?.body
  }

  /**
   * The live value at the path: `listener(value, version)` after the first answer and after
   * every change that touches the path (value undefined: nothing there). Resumed after a
   * reconnect from its version; a snapshot of the path after a gap or expired history.
   */
  subscribe (listener: PathListener, options: PathSubscribeOptions = {}): PathSubscription {
    return this.live.subscribePath(this.project, this.path, listener, options)
  }

  /** The path's history after `since`, page by page (only the changes that touch it). */
  async * changes (options: { since?: number, limit?: number } = {}): AsyncGenerator<PathChangesPage, void, undefined> {
    let since = options.since ?? 0
    for (;;) {
      const limit = options.limit === undefined ? '' : `&limit=${encodeURIComponent(String(options.limit))}`
      const url = `${this.contentBase}/changes?path=${encodeURIComponent(this.path)}&since=${encodeURIComponent(String(since))}${limit}`
      const page = (await this.http.request<PathChangesPage>('GET', url)).body
      yield page
      const last = page.changes.at(-1)
      if (!page.more || last === undefined) return
      since = last.version
    }
  }
}
