// The part of a content write's filter that ties it to the project's schema (docs/design.md
// §12). A write checked against no schema must find no schema in the project document; a
// write checked against a schema must find that very revision. Setting a schema does not
// change the version, so the version filter alone would not see it: a schema set (or removed)
// between the check and the write makes this condition match nothing, and the write starts again.
import type { Document } from 'mongodb'

/** The project document's field holding its schema: { revision, json, setBy, setAt }. */
export const SCHEMA_FIELD = 'schema'

/** The filter members requiring the schema revision a write was checked against (null: none). */
export function schemaCondition (revision: string | null): Document {
  return revision === null ? { [SCHEMA_FIELD]: { $exists: false } } : { [`${SCHEMA_FIELD}.revision`]: revision }
}
