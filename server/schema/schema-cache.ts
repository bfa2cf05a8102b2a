// Compiled schemas by revision: a schema is compiled once per version it is set in (a new
// PUT is a new revision), not once per write. Each store keeps one.
import type { JsonSchema } from './compile.js'
import { ContentSchema } from './content-schema.js'

/** Projects with a schema that this process keeps compiled at once; the least recently used goes first. */
const DEFAULT_CAPACITY = 256

export class SchemaCache {
  private readonly compiled = new Map<string, ContentSchema>()

  constructor (private readonly capacity = DEFAULT_CAPACITY) {}

  /** The compiled schema of a revision; `load` supplies the schema when it is not compiled yet. */
  get (revision: string, load: () => JsonSchema): ContentSchema {
    const known = this.compiled.get(revision)
    if (known) {
      // Most recently used last.
      this.compiled.delete(revision)
      this.compiled.set(revision, known)
      return known
    }
    const schema = ContentSchema.compile(load())
    if (this.compiled.size >= this.capacity) this.compiled.delete(this.compiled.keys().next().value as string)
    this.compiled.set(revision, schema)
    return schema
  }
}
