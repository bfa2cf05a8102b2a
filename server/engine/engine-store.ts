// What every store gets from the engine rather than writing itself (issue 27): content writes
// with their rules (content-engine.ts), commit notification, and the parsed form of a change
// log page. A store extends this and supplies its primitives: the content-write primitive
// (contentCommitter) and readChangesJson here, the other concerns by server/store/types.ts.
import { parsedPage } from '../store/change-pages.js'
import type { ApplyOptions, ChangesJsonPage, ChangesPage, CommitListener, ContentApi, ProjectRecord, StoreOperation } from '../store/types.js'
import { ContentEngine, type ContentCommitter, type ContentEngineOptions } from './content-engine.js'

export abstract class EngineStore implements ContentApi {
  private readonly engine: ContentEngine

  protected constructor (options: ContentEngineOptions) {
    // Asked for at each write: a store builds its parts after this constructor.
    this.engine = new ContentEngine(() => this.contentCommitter(), options)
  }

  /** The store's content-write primitive (content-engine.ts ContentCommitter). */
  protected abstract contentCommitter (): ContentCommitter

  abstract readChangesJson (project: ProjectRecord, since: number, limit: number): Promise<ChangesJsonPage>

  onCommit (listener: CommitListener): void {
    this.engine.onCommit(listener)
  }

  applyOperation (project: ProjectRecord, operation: StoreOperation, options: ApplyOptions): Promise<{ version: number }> {
    return this.engine.apply(project, operation, options)
  }

  async readChanges (project: ProjectRecord, since: number, limit: number): Promise<ChangesPage> {
    return parsedPage(await this.readChangesJson(project, since, limit))
  }
}
