// The part of a content write's filter that ties it to the project's schema (docs/design.md
// §12). A write checked against no schema must find no schema in the project document; a
// write checked against a schema must find that very revision. A schema set (or removed)
// between the check and the write makes the filter match nothing, and the store checks again.
import type { Document } from 'mongodb'
import type { MongoWrite } from './translate.js'

/** The project document's field holding its schema: { revision, json, setBy, setAt }. */
export const SCHEMA_FIELD = 'schema'

/** `write` with its filter also requiring the schema revision it was checked against (null: none). */
export function withSchemaCondition (write: MongoWrite, revision: string | null): MongoWrite {
  const condition: Document = revision === null ? { [SCHEMA_FIELD]: { $exists: false } } : { [`${SCHEMA_FIELD}.revision`]: revision }
  return { ...write, filter: { ...write.filter, ...condition } }
}
