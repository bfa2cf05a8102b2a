// The MongoDB store's rules documents and app sign-in settings (docs/design.md §17): one
// document per project in `projectRules` and `projectAppAuth`, `_id` the project id, removed
// with the project (mongo-store.ts deleteProject). A put checks the project exists first; one
// deleted between the check and the upsert leaves a document no project id ever reads again
// (ids are never reused), and the project's delete removes it anyway.
import type { Collection, Db } from 'mongodb'
import { ContentdError } from '../../../shared/errors.js'
import type { JsonObject } from '../../../shared/json.js'
import type { AppAuthRecord, AppRulesStore, RulesRecord } from '../app-rules-types.js'

interface RulesDoc {
  _id: string
  revision: string
  /** The document as JSON text: its keys start with "." and "$", which field names should not. */
  json: string
  setBy: string
  setAt: string
}

interface AppAuthDoc extends Omit<AppAuthRecord, 'jwks'> {
  _id: string
  /** The JWK set as JSON text (its members are the JWK's, any name). */
  jwksJson: string | null
}

export class MongoAppRules implements AppRulesStore {
  private readonly rules: Collection<RulesDoc>
  private readonly auth: Collection<AppAuthDoc>
  private readonly projects: Collection<{ _id: string }>

  constructor (db: Db, private readonly run: <T>(call: () => Promise<T>) => Promise<T>) {
    this.rules = db.collection('projectRules')
    this.auth = db.collection('projectAppAuth')
    this.projects = db.collection('projects')
  }

  async getRules (projectId: string): Promise<RulesRecord | null> {
    const doc = await this.run(() => this.rules.findOne({ _id: projectId }))
    return doc ? { revision: doc.revision, document: JSON.parse(doc.json) as JsonObject, setBy: doc.setBy, setAt: doc.setAt } : null
  }

  async putRules (projectId: string, record: RulesRecord): Promise<void> {
    await this.requireProject(projectId)
    const doc = { revision: record.revision, json: JSON.stringify(record.document), setBy: record.setBy, setAt: record.setAt }
    await this.run(() => this.rules.replaceOne({ _id: projectId }, doc, { upsert: true }))
  }

  async deleteRules (projectId: string): Promise<boolean> {
    return (await this.run(() => this.rules.deleteOne({ _id: projectId }))).deletedCount > 0
  }

  async getAppAuth (projectId: string): Promise<AppAuthRecord | null> {
    const doc = await this.run(() => this.auth.findOne({ _id: projectId }))
    if (!doc) return null
    const { _id: _, jwksJson, ...rest } = doc
    return { ...rest, jwks: jwksJson === null ? null : JSON.parse(jwksJson) as JsonObject }
  }

  async putAppAuth (projectId: string, record: AppAuthRecord): Promise<void> {
    await this.requireProject(projectId)
    const { jwks, ...rest } = record
    await this.run(() => this.auth.replaceOne({ _id: projectId }, { ...rest, jwksJson: jwks === null ? null : JSON.stringify(jwks) }, { upsert: true }))
  }

  async deleteAppAuth (projectId: string): Promise<boolean> {
    return (await this.run(() => this.auth.deleteOne({ _id: projectId }))).deletedCount > 0
  }

  /** Both of a project's documents, when the project is deleted. */
  async deleteOfProject (projectId: string): Promise<void> {
    await this.run(() => this.rules.deleteOne({ _id: projectId }))
    await this.run(() => this.auth.deleteOne({ _id: projectId }))
  }

  private async requireProject (projectId: string): Promise<void> {
    if (!(await this.run(() => this.projects.findOne({ _id: projectId }, { projection: { _id: 1 } })))) throw new ContentdError('PROJECT_NOT_FOUND')
  }
}
