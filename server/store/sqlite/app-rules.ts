// The embedded store's rules documents and app sign-in settings (docs/design.md §17): one
// row per project in project_rules and project_app_auth, gone with the project (foreign keys).
import type Database from 'better-sqlite3'
import { ContentdError } from '../../../shared/errors.js'
import type { JsonObject } from '../../../shared/json.js'
import type { AppAuthRecord, AppRulesStore, RulesRecord } from '../app-rules-types.js'
import { toStoreError } from './store-errors.js'

type Row = Record<string, unknown>

function prepareStatements (db: Database.Database) {
  return {
    rules: db.prepare('SELECT revision, document, set_by, set_at FROM project_rules WHERE project_id = ?'),
    putRules: db.prepare(`INSERT INTO project_rules (project_id, revision, document, set_by, set_at) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (project_id) DO UPDATE SET revision = excluded.revision, document = excluded.document, set_by = excluded.set_by, set_at = excluded.set_at`),
    deleteRules: db.prepare('DELETE FROM project_rules WHERE project_id = ?'),
    auth: db.prepare('SELECT revision, issuer, audience, jwks, jwks_url, secret_ciphertext, set_by, set_at FROM project_app_auth WHERE project_id = ?'),
    putAuth: db.prepare(`INSERT INTO project_app_auth (project_id, revision, issuer, audience, jwks, jwks_url, secret_ciphertext, set_by, set_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (project_id) DO UPDATE SET revision = excluded.revision, issuer = excluded.issuer, audience = excluded.audience, jwks = excluded.jwks,
      jwks_url = excluded.jwks_url, secret_ciphertext = excluded.secret_ciphertext, set_by = excluded.set_by, set_at = excluded.set_at`),
    deleteAuth: db.prepare('DELETE FROM project_app_auth WHERE project_id = ?'),
    project: db.prepare('SELECT 1 FROM projects WHERE id = ?').pluck()
  }
}

const textOrNull = (value: unknown) => value === null || value === undefined ? null : String(value)

export class SqliteAppRules implements AppRulesStore {
  private readonly statements: ReturnType<typeof prepareStatements>

  constructor (private readonly db: Database.Database) {
    this.statements = prepareStatements(db)
  }

  getRules (projectId: string): Promise<RulesRecord | null> {
    return guarded(() => {
      const row = this.statements.rules.get(projectId) as Row | undefined
      return row ? { revision: String(row.revision), document: JSON.parse(String(row.document)) as JsonObject, setBy: String(row.set_by), setAt: String(row.set_at) } : null
    })
  }

  putRules (projectId: string, record: RulesRecord): Promise<void> {
    return guarded(() => this.inProject(projectId, () => {
      this.statements.putRules.run(projectId, record.revision, JSON.stringify(record.document), record.setBy, record.setAt)
    }))
  }

  deleteRules (projectId: string): Promise<boolean> {
    return guarded(() => this.statements.deleteRules.run(projectId).changes > 0)
  }

  getAppAuth (projectId: string): Promise<AppAuthRecord | null> {
    return guarded(() => {
      const row = this.statements.auth.get(projectId) as Row | undefined
      if (!row) return null
      const jwks = textOrNull(row.jwks)
      return {
        revision: String(row.revision),
        issuer: String(row.issuer),
        audience: textOrNull(row.audience),
        jwks: jwks === null ? null : JSON.parse(jwks) as JsonObject,
        jwksUrl: textOrNull(row.jwks_url),
        secretCiphertext: textOrNull(row.secret_ciphertext),
        setBy: String(row.set_by),
        setAt: String(row.set_at)
      }
    })
  }

  putAppAuth (projectId: string, record: AppAuthRecord): Promise<void> {
    return guarded(() => this.inProject(projectId, () => {
      this.statements.putAuth.run(projectId, record.revision, record.issuer, record.audience, record.jwks === null ? null : JSON.stringify(record.jwks), record.jwksUrl, record.secretCiphertext, record.setBy, record.setAt)
    }))
  }

  deleteAppAuth (projectId: string): Promise<boolean> {
    return guarded(() => this.statements.deleteAuth.run(projectId).changes > 0)
  }

  /** PROJECT_NOT_FOUND rather than a foreign-key failure for a project deleted meanwhile. */
  private inProject (projectId: string, write: () => void): void {
    this.db.transaction(() => {
      if (this.statements.project.get(projectId) === undefined) throw new ContentdError('PROJECT_NOT_FOUND')
      write()
    }).immediate()
  }
}

function guarded<T> (call: () => T): Promise<T> {
  try {
    return Promise.resolve(call())
  } catch (error) {
    return Promise.reject(toStoreError(error))
  }
}
