// One source for API shapes, at the type level: the SDK's types, the server's views and the
// shared event types are exactly z.infer of the response schemas in shared/api/ (which the
// OpenAPI document is generated from). A hand-written interface in their place, with a member
// more or less, fails the type check (`npm run typecheck` covers test/). So that a plain
// `vitest run` proves it too, the last test compiles this file with the TypeScript compiler,
// and a drifted copy of one assertion, and expects errors for the drifted one only.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, expectTypeOf, it } from 'vitest'
import type { ResponseBody } from '../../shared/api/index.js'
import type { ApiKeyInfo, ChangeEntry, ChangesPage, ContentdClient, CreatedApiKey, CreatedWebhook, DeliveryView, Me, Member, PingResult, ProjectClient, ProjectSummary, SchemaSet, SessionGrant, WebhookView } from '../../shared/client/index.js'
import type { ErrorBody, SchemaError } from '../../shared/errors.js'
import type { Actor as ChangeActor } from '../../shared/events.js'
import type { SessionGrant as ServerSessionGrant } from '../../server/services/accounts.js'
import type { KeyView } from '../../server/services/keys.js'
import type { MemberView, ProjectView } from '../../server/services/projects.js'
import type { SchemaSet as ServerSchemaSet } from '../../server/services/schemas.js'
import type { deliveryView, webhookView, WebhookService } from '../../server/webhooks/service.js'

type Item<T> = T extends ReadonlyArray<infer I> ? I : never

describe('SDK types are the inferred response types', () => {
  it('accounts, projects, members and keys', () => {
    expectTypeOf<SessionGrant>().toEqualTypeOf<ResponseBody<'Session'>>()
    expectTypeOf<Me>().toEqualTypeOf<ResponseBody<'Me'>>()
    expectTypeOf<ProjectSummary>().toEqualTypeOf<ResponseBody<'Project'>>()
    expectTypeOf<ProjectSummary>().toEqualTypeOf<Item<ResponseBody<'ProjectList'>['projects']>>()
    expectTypeOf<Member>().toEqualTypeOf<ResponseBody<'Member'>>()
    expectTypeOf<ApiKeyInfo>().toEqualTypeOf<ResponseBody<'ApiKey'>>()
    expectTypeOf<ApiKeyInfo>().toEqualTypeOf<Item<ResponseBody<'ApiKeyList'>['keys']>>()
    expectTypeOf<CreatedApiKey>().toEqualTypeOf<ResponseBody<'NewApiKey'>>()
    // The drift issue 27 found: the SDK's key lacked the narrowing the server returns.
    expectTypeOf<ApiKeyInfo>().toHaveProperty('paths')
    expectTypeOf<ApiKeyInfo>().toHaveProperty('ops')
  })

  it('content, history, schema and webhooks', () => {
    expectTypeOf<ChangeEntry>().toEqualTypeOf<ResponseBody<'Change'>>()
    expectTypeOf<ChangeEntry['actor']>().toEqualTypeOf<ResponseBody<'Actor'>>()
    expectTypeOf<ChangeActor>().toEqualTypeOf<ResponseBody<'Actor'>>()
    expectTypeOf<ChangesPage>().toEqualTypeOf<ResponseBody<'ChangesPage'>>()
    expectTypeOf<SchemaSet>().toEqualTypeOf<ResponseBody<'SchemaSet'>>()
    expectTypeOf<WebhookView>().toEqualTypeOf<Item<ResponseBody<'WebhookList'>['webhooks']>>()
    expectTypeOf<DeliveryView>().toEqualTypeOf<Item<ResponseBody<'DeliveryList'>['deliveries']>>()
    expectTypeOf<CreatedWebhook>().toEqualTypeOf<ResponseBody<'NewWebhook'>>()
    expectTypeOf<PingResult>().toEqualTypeOf<ResponseBody<'PingResult'>>()
    expectTypeOf<ErrorBody>().toEqualTypeOf<ResponseBody<'Error'>>()
    expectTypeOf<SchemaError>().toEqualTypeOf<NonNullable<ResponseBody<'Error'>['errors']>[number]>()
  })

  it('the SDK methods resolve to them', () => {
    expectTypeOf<ContentdClient['me']>().returns.resolves.toEqualTypeOf<ResponseBody<'Me'>>()
    expectTypeOf<ContentdClient['login']>().returns.resolves.toEqualTypeOf<ResponseBody<'Session'>>()
    expectTypeOf<ContentdClient['keys']>().returns.resolves.toEqualTypeOf<ResponseBody<'ApiKeyList'>['keys']>()
    expectTypeOf<ContentdClient['createKey']>().returns.resolves.toEqualTypeOf<ResponseBody<'NewApiKey'>>()
    expectTypeOf<ContentdClient['projects']>().returns.resolves.toEqualTypeOf<ResponseBody<'ProjectList'>['projects']>()
    expectTypeOf<ProjectClient['info']>().returns.resolves.toEqualTypeOf<ResponseBody<'Project'>>()
    expectTypeOf<ProjectClient['members']>().returns.resolves.toEqualTypeOf<ResponseBody<'MemberList'>['members']>()
    expectTypeOf<ProjectClient['webhooks']>().returns.resolves.toEqualTypeOf<ResponseBody<'WebhookList'>['webhooks']>()
    expectTypeOf<ProjectClient['webhookDeliveries']>().returns.resolves.toEqualTypeOf<ResponseBody<'DeliveryList'>['deliveries']>()
    expectTypeOf<ProjectClient['pingWebhook']>().returns.resolves.toEqualTypeOf<ResponseBody<'PingResult'>>()
    expectTypeOf<ProjectClient['setSchema']>().returns.resolves.toEqualTypeOf<ResponseBody<'SchemaSet'>>()
    expectTypeOf<ProjectClient['getAppAuth']>().returns.resolves.toEqualTypeOf<ResponseBody<'AppAuth'>>()
    expectTypeOf<ProjectClient['setAppAuth']>().returns.resolves.toEqualTypeOf<ResponseBody<'AppAuth'>>()
    expectTypeOf<ProjectClient['checkRules']>().returns.resolves.toEqualTypeOf<ResponseBody<'RulesCheckResult'>>()
  })
})

describe('server views are the inferred response types', () => {
  it('services and webhook views', () => {
    expectTypeOf<ServerSessionGrant>().toEqualTypeOf<ResponseBody<'Session'>>()
    expectTypeOf<ProjectView>().toEqualTypeOf<ResponseBody<'Project'>>()
    expectTypeOf<MemberView>().toEqualTypeOf<ResponseBody<'Member'>>()
    expectTypeOf<KeyView>().toEqualTypeOf<ResponseBody<'ApiKey'>>()
    expectTypeOf<ServerSchemaSet>().toEqualTypeOf<ResponseBody<'SchemaSet'>>()
    expectTypeOf<ReturnType<typeof webhookView>>().toEqualTypeOf<Item<ResponseBody<'WebhookList'>['webhooks']>>()
    expectTypeOf<ReturnType<typeof deliveryView>>().toEqualTypeOf<Item<ResponseBody<'DeliveryList'>['deliveries']>>()
    expectTypeOf<WebhookService['create']>().returns.resolves.toEqualTypeOf<ResponseBody<'NewWebhook'>>()
    expectTypeOf<WebhookService['ping']>().returns.resolves.toEqualTypeOf<ResponseBody<'PingResult'>>()
  })
})

describe('the type check itself', () => {
  const self = fileURLToPath(import.meta.url)
  const options: ts.CompilerOptions = {
    ...ts.convertCompilerOptionsFromJson(JSON.parse(readFileSync(new URL('../../tsconfig.json', import.meta.url), 'utf8')).compilerOptions, '.').options,
    noEmit: true
  }
  let previous: ts.Program | undefined
  /** The type errors of this file with `replace` applied to its text (the second compile reuses the first's unchanged files). */
  const errorsWith = (replace: (source: string) => string): string[] => {
    const host = ts.createCompilerHost(options)
    const read = host.readFile.bind(host)
    host.readFile = file => file === self ? replace(read(file) ?? '') : read(file)
    const program = ts.createProgram([self], options, host, previous)
    previous = program
    return ts.getPreEmitDiagnostics(program, program.getSourceFile(self)).map(d => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
  }

  it('passes as written, and fails for a hand-written type that drifted', { timeout: 60_000 }, () => {
    expect(errorsWith(source => source)).toEqual([])
    // A key type without `ops`, as the SDK had it before issue 27.
    const drifted = errorsWith(source => source.replace(
      'expectTypeOf<ApiKeyInfo>().toEqualTypeOf<ResponseBody<\'ApiKey\'>>()',
      'expectTypeOf<Omit<ApiKeyInfo, \'ops\'>>().toEqualTypeOf<ResponseBody<\'ApiKey\'>>()'
    ))
    expect(drifted.length).toBeGreaterThan(0)
  })
})
