// App users and rules for a project (docs/design.md §17): the owner's trust setting
// (`…/auth`) and rules document (`…/rules`), the simulator (`…/rules/check`), and what a
// request by an app user needs: its token verified (app-tokens.ts) and the project's rules,
// compiled once per rules revision, with a fresh evaluation budget (RULES_EVALUATION_BUDGET).
// Both are kept per project (rules-cache.ts) until a `rules-changed` access event, which a
// change here announces to every node through the change feed, or MAX_AGE_MS.
import { randomUUID } from 'node:crypto'
import type { JWK } from 'jose'
import { appAuthBody, rulesCheckBody, type AppAuthView, type RulesCheckResult } from '../../shared/api/rules.js'
import { applyBatch } from '../../shared/batch.js'
import { ContentdError } from '../../shared/errors.js'
import type { Json, JsonObject } from '../../shared/json.js'
import { parsePath } from '../../shared/path.js'
import { parseBody } from '../../shared/schemas.js'
import type { Clock } from '../clock.js'
import type { RulesConfig } from '../config.js'
import { requireReadAllowed, type RulesCheck } from '../rules/check.js'
import { compileRules, type CompiledRules } from '../rules/document.js'
import { decide, EvaluationBudget } from '../rules/evaluate.js'
import type { AppAuthRecord, RulesRecord } from '../store/app-rules-types.js'
import type { ProjectRecord, Store } from '../store/types.js'
import { checkWebhookTarget, type Resolver } from '../webhooks/target-policy.js'
import type { SecretBox } from '../webhooks/secret-box.js'
import type { AccessEvent, AccessEvents } from './access-events.js'
import { AppTokens, type AppUser } from './app-tokens.js'
import { loadJose } from './jose.js'
import { MAX_AGE_MS, PROJECTS_KEPT, RulesCache, type ProjectTrust } from './rules-cache.js'

/** The HMAC key of HS256 is the secret's UTF-8 bytes, at least this many (RFC 7518 §3.2). */
const MIN_SECRET_BYTES = 32
/** Compiled rules kept per process, by revision. */
const COMPILED_KEPT = 1000

export interface AppRulesOptions {
  store: Store
  secrets: SecretBox
  config: RulesConfig
  allowPrivate: boolean
  now: Clock
  resolve?: Resolver
  /** Where a change of rules or trust is announced (`rules-changed`), for every node to hear. */
  accessEvents?: AccessEvents
}

/** Called after a project's rules or trust setting changed (the cache already forgot them). */
export type RulesChangeListener = (projectId: string) => void

export class AppRules {
  private readonly tokens: AppTokens
  private readonly compiled = new Map<string, CompiledRules>()
  private readonly cache: RulesCache<CompiledRules>
  private readonly listeners = new Set<RulesChangeListener>()
  private heardChanges = 0
  /** recheckReadsOf's shared decision for the latest change heard. */
  private recheck: { projectId: string, heard: number, decide: ReturnType<AppRules['liveReadsOf']> } | null = null

  constructor (private readonly options: AppRulesOptions) {
    this.tokens = new AppTokens({
      cacheEntries: options.config.tokenCacheEntries,
      jwksTimeoutMs: options.config.jwksTimeoutMs,
      allowPrivate: options.allowPrivate,
      openSecret: (ciphertext, projectId) => options.secrets.open(ciphertext, projectId),
      now: options.now,
      ...(options.resolve ? { resolve: options.resolve } : {})
    })
    this.cache = new RulesCache(projectId => this.load(projectId), options.now, PROJECTS_KEPT, MAX_AGE_MS, projectId => this.changed(projectId))
  }

  // ---- what is kept, and when it changes -----------------------------------------------

  /**
   * An access event from this node or another (the change feed): `rules-changed` and
   * `project-deleted` drop what is kept of the project, then tell the watchers (the live
   * streams of app users re-check their `.read`, docs/design.md §17).
   */
  heard (event: AccessEvent): void {
    if (event.kind !== 'rules-changed' && event.kind !== 'project-deleted') return
    this.cache.forget(event.projectId)
    if (event.kind === 'rules-changed') this.changed(event.projectId)
  }

  /** Tells the watchers; from a `rules-changed` message, or a late read that found what one would have said. */
  private changed (projectId: string): void {
    this.heardChanges++
    for (const listener of [...this.listeners]) {
      try { listener(projectId) } catch { /* a watcher logs its own failures */ }
    }
  }

  /**
   * The projects open app streams rest on (access-recheck.ts, every few seconds): what is kept
   * of them is read again once MAX_AGE_MS old, so a change whose message was lost still
   * re-decides those streams.
   */
  refresh (projectIds: Iterable<string>): void {
    this.cache.refresh(projectIds)
  }

  /**
   * How many changes of rules (any project's) this process has heard: a live stream notes it
   * before its first check and looks again once it watches, so a change heard in between is
   * not missed (events.ts watchRules).
   */
  get changesHeard (): number {
    return this.heardChanges
  }

  /** Hears each change of a project's rules or trust setting, after the cache forgot them. */
  watch (listener: RulesChangeListener): () => void {
    this.listeners.add(listener)
    return () => { this.listeners.delete(listener) }
  }

  private async load (projectId: string): Promise<ProjectTrust<CompiledRules>> {
    const [auth, record] = await Promise.all([this.options.store.appRules.getAppAuth(projectId), this.options.store.appRules.getRules(projectId)])
    const rules = record ? this.compiled.get(record.revision) ?? this.keep(record.revision, compileRules(record.document)) : null
    return { auth, rules, revision: `${auth?.revision ?? '-'}/${record?.revision ?? '-'}` }
  }

  /** Forgets here at once, then tells every node (this one included) through the feed. */
  private announce (projectId: string): void {
    this.cache.forget(projectId)
    if (this.options.accessEvents) this.options.accessEvents.emit({ kind: 'rules-changed', projectId })
    else this.heard({ kind: 'rules-changed', projectId })
  }

  // ---- app users --------------------------------------------------------------------

  /** The app user a token names for this project; INVALID_TOKEN when it does not verify. */
  async verify (project: Pick<ProjectRecord, 'id'>, token: string): Promise<AppUser> {
    return this.tokens.verify(project.id, (await this.cache.get(project.id)).auth, token)
  }

  /** What the rules need to decide one request of `user` (the project's rules as kept now). */
  async checkFor (project: Pick<ProjectRecord, 'id'>, user: AppUser): Promise<RulesCheck> {
    return { rules: await this.rulesOf(project.id), auth: user.claims, budget: new EvaluationBudget(this.options.config.evaluationBudget), now: this.options.now }
  }

  /**
   * A live read by an app user (a path or query subscription, a stream, docs/design.md §15,
   * §16): the token verified against the project (INVALID_TOKEN), then `.read` at `path` on
   * the current content (RULES_DENIED naming the path). Used to open one and, after a change
   * of rules, to decide whether it stays open. `who`: the token, or the user a request verified.
   */
  async requireLiveRead (project: Pick<ProjectRecord, 'id'>, who: string | AppUser, path: readonly string[]): Promise<AppUser> {
    return (await this.liveReadsOf(project))(who, path)
  }

  /**
   * The re-check of every live read of a project after a change of its rules (Socket.IO's
   * subscriptions and each SSE stream ask for it on their own): one liveReadsOf per change
   * heard, shared by all of them, and kept only until it is read.
   */
  recheckReadsOf (project: Pick<ProjectRecord, 'id'>): Promise<(who: string | AppUser, path: readonly string[]) => Promise<AppUser>> {
    const kept = this.recheck
    if (kept && kept.projectId === project.id && kept.heard === this.heardChanges) return kept.decide
    const decide = this.liveReadsOf(project)
    this.recheck = { projectId: project.id, heard: this.heardChanges, decide }
    // The re-checks of one change ask in the same turn (the watchers are told together); once
    // it is read, the content is not held on for a change that may never come.
    const release = () => { if (this.recheck?.decide === decide) this.recheck = null }
    decide.then(release, release)
    return decide
  }

  /**
   * requireLiveRead for many live reads of one project (a change of rules re-decides every one
   * of them): the content is read once for all.
   */
  async liveReadsOf (project: Pick<ProjectRecord, 'id'>): Promise<(who: string | AppUser, path: readonly string[]) => Promise<AppUser>> {
    const current = await this.options.store.readContent(project.id)
    if (!current) throw new ContentdError('PROJECT_NOT_FOUND')
    return async (who, path) => {
      const user = typeof who === 'string' ? await this.verify(project, who) : who
      requireReadAllowed(await this.checkFor(project, user), current.content, path)
      return user
    }
  }

  private async rulesOf (projectId: string): Promise<CompiledRules | null> {
    return (await this.cache.get(projectId)).rules
  }

  /** Keeps compiled rules by revision, at most COMPILED_KEPT of them (the oldest go first). */
  private keep (revision: string, rules: CompiledRules): CompiledRules {
    if (this.compiled.size >= COMPILED_KEPT) this.compiled.delete(this.compiled.keys().next().value as string)
    this.compiled.set(revision, rules)
    return rules
  }

  // ---- rules (owner) ------------------------------------------------------------------

  async setRules (project: ProjectRecord, body: unknown, setBy: string): Promise<JsonObject> {
    const rules = this.compileWithinLimit(body)
    const record: RulesRecord = { revision: randomUUID(), document: body as JsonObject, setBy, setAt: new Date(this.options.now()).toISOString() }
    await this.options.store.appRules.putRules(project.id, record)
    this.keep(record.revision, rules)
    this.announce(project.id)
    return record.document
  }

  /** A rules document compiled, within RULES_LIMIT; INVALID_RULES naming what is wrong. */
  private compileWithinLimit (body: unknown): CompiledRules {
    const bytes = Buffer.byteLength(JSON.stringify(body))
    if (bytes > this.options.config.limitBytes) throw new ContentdError('INVALID_RULES', `the document is ${bytes} bytes; RULES_LIMIT is ${this.options.config.limitBytes}`)
    return compileRules(body)
  }

  async getRules (project: ProjectRecord): Promise<RulesRecord> {
    const record = await this.options.store.appRules.getRules(project.id)
    if (!record) throw new ContentdError('RULES_NOT_FOUND')
    return record
  }

  async removeRules (project: ProjectRecord): Promise<void> {
    if (!(await this.options.store.appRules.deleteRules(project.id))) throw new ContentdError('RULES_NOT_FOUND')
    this.announce(project.id)
  }

  /** The simulator: would these claims be allowed this read or write, by which rule (saved rules, or the body's)? */
  async simulate (project: ProjectRecord, body: unknown): Promise<RulesCheckResult> {
    const request = parseBody(rulesCheckBody, body)
    const path = request.path === '' ? [] : parsePath(request.path)
    // Rules given in the body (unsaved edits) are compiled for this answer only, within the
    // same limit as a PUT, and not kept.
    const rules = request.rules === undefined ? await this.rulesOf(project.id) : this.compileWithinLimit(request.rules)
    const snapshot = await this.options.store.readContent(project.id)
    if (!snapshot) throw new ContentdError('PROJECT_NOT_FOUND')
    const budget = new EvaluationBudget(this.options.config.evaluationBudget)
    const auth = (request.auth ?? null) as Json
    const now = this.options.now()
    if (request.op === 'read') return result(decide(rules, { kind: 'read', path, auth, before: snapshot.content, now }, budget))
    // A write of `value` at `path` (a set; without a value, a delete), dry-run on a working
    // copy as the engine's check does (server/rules/check.ts): `newData` is what it would write.
    let after: JsonObject = snapshot.content
    try {
      if (path.length === 0) after = request.value as JsonObject
      else after = applyBatch(snapshot.content, [request.value === undefined ? { op: 'delete', path } : { op: 'set', path, value: request.value as Json }])
    } catch {
      // A write that cannot be applied is decided with nothing changed, as the engine decides it.
    }
    return result(decide(rules, { kind: 'write', path, auth, before: snapshot.content, after, now }, budget))
  }

  // ---- trust setting (owner) ----------------------------------------------------------

  async setAuth (project: ProjectRecord, body: unknown, setBy: string): Promise<AppAuthView> {
    const parsed = parseBody(appAuthBody, body)
    const given = [parsed.jwks, parsed.jwksUrl, parsed.hs256Secret].filter(v => v !== undefined).length
    if (given !== 1) throw new ContentdError('INVALID_AUTH_CONFIG', 'give exactly one of jwks, jwksUrl and hs256Secret')
    let secretCiphertext: string | null = null
    if (parsed.jwks !== undefined) {
      try {
        // Each key imported now: a set that cannot verify anything is refused when set, not at the first token.
        const { importJWK } = await loadJose()
        for (const key of parsed.jwks.keys) await importJWK(key as JWK, typeof key.alg === 'string' ? key.alg : algFor(key))
      } catch (error) {
        throw new ContentdError('INVALID_AUTH_CONFIG', `jwks: ${error instanceof Error ? error.message : 'not a JWK set'}`)
      }
      if (parsed.jwks.keys.some(key => key.kty === 'oct' || 'd' in key)) throw new ContentdError('INVALID_AUTH_CONFIG', 'jwks: public keys only (no "oct" keys, no private parts); use hs256Secret for a shared secret')
    }
    if (parsed.jwksUrl !== undefined) {
      let url: URL
      try {
        url = new URL(parsed.jwksUrl)
      } catch {
        throw new ContentdError('INVALID_AUTH_CONFIG', 'jwksUrl: not a URL')
      }
      if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ContentdError('INVALID_AUTH_CONFIG', 'jwksUrl: an https: URL')
      await checkWebhookTarget(url.href, this.options.allowPrivate, this.options.resolve)
    }
    if (parsed.hs256Secret !== undefined) {
      if (Buffer.byteLength(parsed.hs256Secret) < MIN_SECRET_BYTES) throw new ContentdError('INVALID_AUTH_CONFIG', `hs256Secret: at least ${MIN_SECRET_BYTES} bytes`)
      secretCiphertext = this.options.secrets.seal(parsed.hs256Secret, project.id)
    }
    const record: AppAuthRecord = {
      revision: randomUUID(),
      issuer: parsed.issuer,
      audience: parsed.audience ?? null,
      jwks: (parsed.jwks as JsonObject | undefined) ?? null,
      jwksUrl: parsed.jwksUrl ?? null,
      secretCiphertext,
      setBy,
      setAt: new Date(this.options.now()).toISOString()
    }
    await this.options.store.appRules.putAppAuth(project.id, record)
    this.announce(project.id)
    return authView(record)
  }

  async getAuth (project: ProjectRecord): Promise<AppAuthView> {
    const record = await this.options.store.appRules.getAppAuth(project.id)
    if (!record) throw new ContentdError('AUTH_CONFIG_NOT_FOUND')
    return authView(record)
  }

  async removeAuth (project: ProjectRecord): Promise<void> {
    if (!(await this.options.store.appRules.deleteAppAuth(project.id))) throw new ContentdError('AUTH_CONFIG_NOT_FOUND')
    this.announce(project.id)
  }
}

function authView (record: AppAuthRecord): AppAuthView {
  const kind = record.jwks !== null ? 'jwks' : record.jwksUrl !== null ? 'jwksUrl' : 'hs256Secret'
  return {
    issuer: record.issuer,
    audience: record.audience,
    kind,
    ...(record.jwks !== null ? { jwks: record.jwks as AppAuthView['jwks'] } : {}),
    ...(record.jwksUrl !== null ? { jwksUrl: record.jwksUrl } : {}),
    setBy: record.setBy,
    setAt: record.setAt
  }
}

function result (decision: { allowed: boolean, rule?: string }): RulesCheckResult {
  return decision.rule === undefined ? { allowed: decision.allowed } : { allowed: decision.allowed, rule: decision.rule }
}

/** The algorithm a JWK without `alg` is used with (RS256, ES256 or EdDSA, docs/design.md §17). */
function algFor (key: Record<string, unknown>): string {
  if (key.kty === 'RSA') return 'RS256'
  if (key.kty === 'EC') return 'ES256'
  if (key.kty === 'OKP') return 'EdDSA'
  throw new Error(`a key of type ${JSON.stringify(key.kty)} cannot verify RS256, ES256 or EdDSA`)
}
