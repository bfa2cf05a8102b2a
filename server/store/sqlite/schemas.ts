// The embedded store's content schemas (docs/design.md §12): one row per project with a
// schema, its revision naming the compiled copy in the SchemaCache. Content writes read the
// revision inside their own transaction (schemaFor), so a schema set by this or any other
// process applies to every write that commits after it.
import type Database from 'better-sqlite3'
import { ContentdError } from '../../../shared/errors.js'
import type { JsonSchema } from '../../schema/compile.js'
import { schemaViolation, type ContentSchema } from '../../schema/content-schema.js'
import { SchemaCache } from '../../schema/schema-cache.js'
import type { ContentSnapshot, SchemaRecord } from '../types.js'

type Row = Record<string, unknown>

function prepareStatements (db: Database.Database) {
  return {
    revision: db.prepare('SELECT revision FROM project_schemas WHERE project_id = ?').pluck(),
    schemaText: db.prepare('SELECT schema FROM project_schemas WHERE project_id = ? AND revision = ?').pluck(),
    record: db.prepare('SELECT revision, schema, set_by, set_at FROM project_schemas WHERE project_id = ?'),
    upsert: db.prepare(`INSERT INTO project_schemas (project_id, revision, schema, set_by, set_at) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (project_id) DO UPDATE SET revision = excluded.revision, schema = excluded.schema, set_by = excluded.set_by, set_at = excluded.set_at`),
    remove: db.prepare('DELETE FROM project_schemas WHERE project_id = ?')
  }
}

export class SqliteSchemas {
  private readonly statements: ReturnType<typeof prepareStatements>
  private readonly cache = new SchemaCache()

  constructor (private readonly db: Database.Database) {
    this.statements = prepareStatements(db)
  }

  /** The project's compiled schema, or null; call inside the write's transaction. */
  schemaFor (projectId: string): ContentSchema | null {
    const revision = this.statements.revision.get(projectId) as string | undefined
    if (revision === undefined) return null
    return this.cache.get(revision, () => JSON.parse(String(this.statements.schemaText.get(projectId, revision))) as JsonSchema)
  }

  get (projectId: string): SchemaRecord | null {
    const row = this.statements.record.get(projectId) as Row | undefined
    if (!row) return null
    return { revision: String(row.revision), schema: JSON.parse(String(row.schema)) as JsonSchema, setBy: String(row.set_by), setAt: String(row.set_at) }
  }

  /** Checks the current content (read by `read`) and stores the schema, in one immediate transaction. */
  put (projectId: string, record: SchemaRecord, read: () => ContentSnapshot | null): void {
    const compiled = this.cache.get(record.revision, () => record.schema)
    this.db.transaction(() => {
      const snapshot = read()
      if (!snapshot) throw new ContentdError('PROJECT_NOT_FOUND')
      const violations = compiled.validate(snapshot.content)
      if (violations.length > 0) throw schemaViolation(violations, 409)
      this.statements.upsert.run(projectId, record.revision, JSON.stringify(record.schema), record.setBy, record.setAt)
    }).immediate()
  }

  delete (projectId: string): boolean {
    return this.statements.remove.run(projectId).changes > 0
  }
}
