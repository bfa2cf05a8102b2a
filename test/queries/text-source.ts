// The query hub reads content as JSON text (ContentStorage.readContentJson); these tests' fake
// stores answer with a document, turned into that text at the moment of the read, as a store
// would serialize its current content.
import type { ContentSource } from '../../server/queries/query-hub.js'
import type { ContentSnapshot } from '../../server/store/types.js'

export function textSource (fake: { readContent: (projectId: string) => Promise<ContentSnapshot | null> }): ContentSource {
  return {
    readContentJson: async projectId => {
      const snapshot = await fake.readContent(projectId)
      return snapshot ? { version: snapshot.version, json: JSON.stringify(snapshot.content) } : null
    }
  }
}
