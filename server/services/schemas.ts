// A project's content schema (docs/design.md §12): set, read and removed by the owner (over
// HTTP with a session, or by the operator with the CLI). The store checks the current content
// and stores the schema in one atomic step; this names the revision and who set it.
import { ContentdError } from '../../shared/errors.js'
import { newId } from '../auth/tokens.js'
import type { Clock } from '../clock.js'
import type { ProjectRecord, SchemaRecord, Store } from '../store/types.js'

/** What PUT answers: who set the schema and when (the schema itself is what GET answers). */
export interface SchemaSet {
  message: string
  setBy: string
  setAt: string
}

export class ProjectSchemas {
  constructor (private readonly store: Store, private readonly now: Clock) {}

  /**
   * Sets (or replaces) the project's schema. INVALID_SCHEMA when it is not a draft 2020-12
   * schema; SCHEMA_VIOLATION (409) when the current content breaks it. Content and version
   * stay as they are.
   */
  async set (project: ProjectRecord, schema: unknown, setBy: string): Promise<SchemaSet> {
    const record: SchemaRecord = { revision: newId('sch_'), schema: schema as SchemaRecord['schema'], setBy, setAt: new Date(this.now()).toISOString() }
    await this.store.putSchema(project.id, record)
    return { message: 'Schema set', setBy: record.setBy, setAt: record.setAt }
  }

  /** The stored schema with who set it; SCHEMA_NOT_FOUND when there is none. */
  async get (project: ProjectRecord): Promise<SchemaRecord> {
    const record = await this.store.getSchema(project.id)
    if (!record) throw new ContentdError('SCHEMA_NOT_FOUND')
    return record
  }

  /** Removes the schema; SCHEMA_NOT_FOUND when there is none. */
  async remove (project: ProjectRecord): Promise<void> {
    if (!(await this.store.deleteSchema(project.id))) throw new ContentdError('SCHEMA_NOT_FOUND')
  }
}
