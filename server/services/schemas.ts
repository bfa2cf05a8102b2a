// A project's content schema (docs/design.md §12): set, read and removed by the owner (over
// HTTP with a session, or by the operator with the CLI). The store checks the current content
// and stores the schema in one atomic step; this names the revision and who set it.
import type { SchemaSetView } from '../../shared/api/schema.js'
import { ContentdError } from '../../shared/errors.js'
import { newId } from '../auth/tokens.js'
import type { Clock } from '../clock.js'
import type { ProjectRecord, SchemaRecord, Store } from '../store/types.js'

/** What PUT answers: who set the schema and when (the schema itself is what GET answers). */
export type SchemaSet = SchemaSetView

/**
 * The schema's size as stored (and as GET answers it): compact JSON, so the body's own
 * whitespace does not count. 0 for a schema nested too deeply to serialize: the compiler
 * refuses it for its depth, with a message that says so.
 */
function jsonBytes (schema: unknown): number {
  try {
    return Buffer.byteLength(JSON.stringify(schema) ?? '')
  } catch (error) {
    if (error instanceof RangeError) return 0
    throw error
  }
}

export class ProjectSchemas {
  /** `limitBytes`: SCHEMA_LIMIT, the largest schema in bytes of its compact JSON (docs/design.md §13b). */
  constructor (private readonly store: Store, private readonly now: Clock, private readonly limitBytes: number) {}

  /**
   * Sets (or replaces) the project's schema. INVALID_SCHEMA when it is not a draft 2020-12
   * schema or is larger than SCHEMA_LIMIT; SCHEMA_VIOLATION (409) when the current content
   * breaks it. Content and version stay as they are.
   */
  async set (project: ProjectRecord, schema: unknown, setBy: string): Promise<SchemaSet> {
    const bytes = jsonBytes(schema)
    if (bytes > this.limitBytes) throw new ContentdError('INVALID_SCHEMA', `the schema is ${bytes} bytes of JSON; at most ${this.limitBytes} (SCHEMA_LIMIT)`)
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
