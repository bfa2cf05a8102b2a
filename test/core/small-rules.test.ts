// The small rules that several parts of the code need, each in one place (issue 27): "at or
// below" for narrowed keys and webhook filters, and project references as the server, the
// realtime payloads, the SDK and the console read and write them.
import { describe, expect, it } from 'vitest'
import { parseRoute } from '../../console/route.js'
import { parseProjectRef } from '../../shared/client/project-ref.js'
import { dotSegments, isAtOrBelow } from '../../shared/path.js'
import { formatProjectRef, projectRefHalves, splitProjectRef } from '../../shared/project-ref.js'
import { webhookMatches } from '../../shared/webhooks.js'
import { projectRefOf as refOfPayload } from '../../server/realtime/subscriptions.js'
import { projectRefOf as refOfProject } from '../../server/store/change-entry.js'

describe('at or below', () => {
  it.each([
    ['votes', 'votes', true],
    ['votes.a', 'votes', true],
    ['votes.a.b', 'votes.a', true],
    ['votesX', 'votes', false],
    ['vo', 'votes', false],
    ['votes', 'votes.a', false],
    ['other.votes', 'votes', false],
    ['votes', '', true],
    ['', '', true]
  ])('%j at or below %j: %s', (path, scope, expected) => {
    expect(isAtOrBelow(dotSegments(path), scope)).toBe(expected)
  })

  it('dotSegments reads "" as the root', () => {
    expect(dotSegments('')).toEqual([])
    expect(dotSegments('a.b')).toEqual(['a', 'b'])
  })

  it('a webhook path filter follows the same rule (an entry without a path is at or below every filter)', () => {
    expect(webhookMatches({ op: 'set', path: 'votes.a' }, ['votes'], null)).toBe(true)
    expect(webhookMatches({ op: 'set', path: 'votesX' }, ['votes'], null)).toBe(false)
    expect(webhookMatches({ op: 'set', path: 'votes' }, ['votes.a'], null)).toBe(false)
    expect(webhookMatches({ op: 'set', path: 'anything' }, [''], null)).toBe(true)
  })
})

describe('project references', () => {
  it('are written in one canonical form: "@" and a lower-case owner, by every writer', () => {
    expect(formatProjectRef('Alice', 'demo')).toBe('@alice/demo')
    expect(formatProjectRef('@Alice', 'demo')).toBe('@alice/demo')
    expect(refOfProject({ ownerName: 'alice', slug: 'demo' })).toBe('@alice/demo')
    expect(parseProjectRef('Alice/demo').ref).toBe('@alice/demo')
    expect(parseRoute('#/@Alice/demo/history')).toEqual({ page: 'project', project: '@alice/demo', tab: 'history' })
  })

  it('are read by one pattern: the SDK, the services and the console route agree on what is a reference', () => {
    for (const ref of ['@alice/demo', 'alice/demo', '@a-b/x_y-9']) {
      expect(splitProjectRef(ref), ref).not.toBeNull()
      expect(parseRoute(`#/@${ref.replace(/^@/, '')}`), ref).toMatchObject({ page: 'project' })
    }
    for (const ref of ['@alice/Demo', '@alice/', '@/demo', '@al ice/demo', `@${'a'.repeat(40)}/demo`, '@alice/-demo']) {
      expect(splitProjectRef(ref), ref).toBeNull()
      expect(parseRoute(`#/@${ref.replace(/^@/, '')}`), ref).toMatchObject({ page: 'not-found' })
    }
  })

  it('realtime payloads take the halves around the first "/", checked afterwards one by one', () => {
    expect(projectRefHalves('@alice/demo')).toEqual({ owner: '@alice', slug: 'demo' })
    expect(projectRefHalves('alice/de/mo')).toEqual({ owner: 'alice', slug: 'de/mo' })
    for (const ref of ['no-slash', '/demo', '@alice/', '', 5, null]) expect(projectRefHalves(ref), String(ref)).toBeNull()
    expect(refOfPayload({ project: '@alice/demo' })).toEqual({ owner: '@alice', slug: 'demo' })
    expect(refOfPayload({})).toBeNull()
  })
})
