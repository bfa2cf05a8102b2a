// The console's pure modules: routes, search, typed value input, edit helpers, the tree's
// open state, key expiry, the Connect snippets, JSON text and the schema editor's text. (The pages themselves run in Chromium:
// test/browser/console.test.ts.)
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { Json } from '../../shared/json.js'
import { exportFileName, readImport } from '../../console/content/json-file.js'
import { childPath, describeEdit, newKeyProblem, segmentsOf, valueAt } from '../../console/content/edits.js'
import { Revisions } from '../../console/content/live-document.js'
import { searchDocument } from '../../console/content/search.js'
import { DEFAULT_OPEN_BUDGET, OpenState, RowRegistry } from '../../console/content/tree-state.js'
import { kindOf, parseValue, preview, textOf } from '../../console/content/value-input.js'
import { expiryOf } from '../../console/key-expiry.js'
import { describeNarrowing, MAX_KEY_PATHS, narrowingOf } from '../../console/key-narrowing.js'
import { actorName, diffPaths, entryTarget } from '../../console/panels/history-text.js'
import { parsePathList, WEBHOOK_OP_CHOICES } from '../../console/panels/webhook-form.js'
import { parseSchemaText, SCHEMA_DIALECT, starterSchema } from '../../console/panels/schema-text.js'
import { locate, parseJsonText, pretty } from '../../console/json-text.js'
import { hrefOf, parseRoute, titleOf, type Route } from '../../console/route.js'
import { INSTALL, inScope, snippetsFor, usableKeys } from '../../console/snippets.js'

describe('routes', () => {
  it('parses every place and formats it back', () => {
    const cases: Array<[string, Route]> = [
      ['', { page: 'projects' }],
      ['#/', { page: 'projects' }],
      ['#/new', { page: 'new-project' }],
      ['#/keys', { page: 'keys' }],
      ['#/@alice/demo', { page: 'project', project: '@alice/demo', tab: 'content' }],
      ['#/@Alice/demo/connect', { page: 'project', project: '@alice/demo', tab: 'connect' }],
      ['#/@alice/my_site-2/settings/', { page: 'project', project: '@alice/my_site-2', tab: 'settings' }],
      ['#/@alice/demo/history', { page: 'project', project: '@alice/demo', tab: 'history' }],
      ['#/@alice/demo/nonsense', { page: 'not-found', hash: '#/@alice/demo/nonsense' }],
      ['#/alice/demo', { page: 'not-found', hash: '#/alice/demo' }],
      ['#/@alice/Demo', { page: 'not-found', hash: '#/@alice/Demo' }]
    ]
    for (const [hash, route] of cases) expect(parseRoute(hash), hash).toEqual(route)
    expect(hrefOf({ page: 'project', project: '@alice/demo', tab: 'members' })).toBe('#/@alice/demo/members')
    expect(parseRoute(hrefOf({ page: 'project', project: '@alice/demo', tab: 'members' }))).toEqual({ page: 'project', project: '@alice/demo', tab: 'members' })
    expect(titleOf({ page: 'project', project: '@alice/demo', tab: 'content' })).toBe('Content · @alice/demo · contentd')
  })
})

describe('search', () => {
  const doc: Json = { site: { title: 'Hello World', visits: 42 }, posts: [{ title: 'First', likes: 3 }, { title: 'Hello again', likes: 0, draft: null }] }

  it('finds paths and values, case-insensitively, in document order', () => {
    expect(searchDocument(doc, 'hello').matches).toEqual([
      { path: 'site.title', value: 'Hello World', on: 'value' },
      { path: 'posts.1.title', value: 'Hello again', on: 'value' }
    ])
    expect(searchDocument(doc, 'LIKES').matches.map(m => m.path)).toEqual(['posts.0.likes', 'posts.1.likes'])
    expect(searchDocument(doc, 'posts.1').matches.map(m => m.path)).toEqual(['posts.1', 'posts.1.title', 'posts.1.likes', 'posts.1.draft'])
    expect(searchDocument(doc, '42').matches).toEqual([{ path: 'site.visits', value: 42, on: 'value' }])
    expect(searchDocument(doc, 'null').matches.map(m => m.path)).toEqual(['posts.1.draft'])
    expect(searchDocument(doc, '   ')).toEqual({ matches: [], truncated: false })
  })

  it('stops at the limit and says so', () => {
    const many = { list: Array.from({ length: 50 }, (_, i) => `item ${i}`) }
    const result = searchDocument(many, 'item', 10)
    expect(result.matches).toHaveLength(10)
    expect(result.truncated).toBe(true)
    expect(searchDocument(many, 'item 7', 10)).toEqual({ matches: [{ path: 'list.7', value: 'item 7', on: 'value' }], truncated: false })
  })

  it('walks deep documents without recursion', () => {
    let deep: any = { needle: true }
    for (let i = 0; i < 5000; i++) deep = { d: deep }
    expect(searchDocument(deep, 'needle').matches).toHaveLength(1)
  })
})

describe('typed value input', () => {
  it('parses each kind, and explains what is wrong', () => {
    expect(parseValue('string', ' 42 ')).toEqual({ ok: true, value: ' 42 ' })
    expect(parseValue('number', ' -0.5 ')).toEqual({ ok: true, value: -0.5 })
    expect(parseValue('number', '1e400')).toMatchObject({ ok: false })
    expect(parseValue('number', '')).toMatchObject({ ok: false })
    expect(parseValue('number', 'abc')).toMatchObject({ ok: false, message: expect.stringContaining('finite number') })
    expect(parseValue('boolean', 'false')).toEqual({ ok: true, value: false })
    expect(parseValue('null', 'anything')).toEqual({ ok: true, value: null })
    expect(parseValue('json', '{"a":[1]}')).toEqual({ ok: true, value: { a: [1] } })
    expect(parseValue('json', '{a:1}')).toMatchObject({ ok: false, message: expect.stringContaining('Not valid JSON') })
  })

  it('starts editors from the current value', () => {
    expect([kindOf('x'), kindOf(1), kindOf(true), kindOf(null), kindOf([]), kindOf({})]).toEqual(['string', 'number', 'boolean', 'null', 'json', 'json'])
    expect(textOf(3, 'number')).toBe('3')
    expect(textOf(3, 'string')).toBe('')
    expect(textOf({ a: 1 }, 'json')).toBe('{\n  "a": 1\n}')
    expect(textOf(false, 'boolean')).toBe('false')
    expect(preview('x'.repeat(100), 10)).toBe('"xxxxxxxx…')
  })
})

describe('edit helpers', () => {
  it('walks paths, names edits and checks new keys by the server rules', () => {
    const doc = { a: { list: [10, { b: 'x' }] }, 'con structor': 1 }
    expect(valueAt(doc, '')).toBe(doc)
    expect(valueAt(doc, 'a.list.1.b')).toBe('x')
    expect(valueAt(doc, 'a.list.7')).toBeUndefined()
    expect(valueAt(doc, 'a.list.0.deeper')).toBeUndefined()
    expect(valueAt(doc, 'toString')).toBeUndefined()
    expect(segmentsOf('')).toEqual([])
    expect(childPath('', 'a')).toBe('a')
    expect(childPath('a', '0')).toBe('a.0')
    expect(describeEdit({ op: 'insert', path: 'list', index: 2, value: 'x' })).toBe('insert "x" at list.2')
    expect(describeEdit({ op: 'increment', path: 'n', by: 1 })).toBe('add 1 to n')
    expect(newKeyProblem('title')).toBeNull()
    expect(newKeyProblem('a.b')).toContain('"."')
    expect(newKeyProblem('$set')).toBe('The key starts with "$"')
    expect(newKeyProblem('')).toBe('The key is empty')
    expect(newKeyProblem('__proto__')).toBe('The key is "__proto__"')
  })
})

describe('revisions', () => {
  it('bumps a changed path and its ancestors only; reset starts a new epoch', () => {
    const revisions = new Revisions()
    revisions.touch('a.b.c')
    const [root, a, ab, abc] = ['', 'a', 'a.b', 'a.b.c'].map(p => revisions.of(p))
    expect(new Set([root, a, ab, abc]).size).toBe(1)
    expect(root).toBeGreaterThan(0)
    expect(revisions.of('a.x')).toBe(0)
    expect(revisions.of('a.b.c.d')).toBe(0)
    revisions.touch('a.x')
    expect(revisions.of('a')).toBeGreaterThan(ab as number)
    expect(revisions.of('a.b')).toBe(ab)
    revisions.reset()
    expect(revisions.epoch).toBe(1)
    expect(revisions.of('a')).toBe(0)
  })
})

describe('tree state', () => {
  it('opens the top level and small containers by default, within a budget; remembers choices; reveals', () => {
    const open = new OpenState()
    expect(open.isOpen('a', 1, 5000, 3)).toBe(true)
    expect(open.isOpen('many', 1, 5, 51)).toBe(false)
    expect(open.isOpen('a.b', 2, 5, 8)).toBe(true)
    expect(open.isOpen('a.big', 2, 500, 8)).toBe(false)
    expect(open.isOpen('a.list.0', 2, 5, 5000)).toBe(false)
    expect(open.isOpen('a.b.c.d', 4, 1, 1)).toBe(false)
    // A default, once decided, stays (the budget never closes what is open).
    expect(open.isOpen('a', 1, 5000, 3)).toBe(true)
    open.set('a', false)
    expect(open.isOpen('a', 1, 1, 1)).toBe(false)
    open.reveal('a.b.150.title')
    expect(['a', 'a.b', 'a.b.150'].map(p => open.isOpen(p, 9, 9999, 9999))).toEqual([true, true, true])
    expect(open.revealedChild('a.b')).toBe('150')
    expect(open.revealedChild('')).toBe('a')
    expect(open.revealedChild('x')).toBeNull()
    open.collapseAll()
    expect(open.isOpen('a', 1, 1, 1)).toBe(false)
    expect(open.revealedChild('a')).toBeNull()
    open.expandAll()
    expect(open.isOpen('a.b.c.d', 4, 1000, 1000)).toBe(true)
  })

  it('stops opening by default when the budget of rows is spent', () => {
    const open = new OpenState()
    const opened = Array.from({ length: 50 }, (_, i) => open.isOpen(`k${i}`, 1, 100, 50)).filter(Boolean).length
    expect(opened).toBe(DEFAULT_OPEN_BUDGET / 100)
  })

  it('finds the row of a path or of its nearest ancestor', () => {
    const rows = new RowRegistry()
    const [root, a] = [{ id: 'root' }, { id: 'a' }] as unknown as HTMLElement[]
    rows.attach('', root as HTMLElement)
    rows.attach('a', a as HTMLElement)
    expect(rows.nearest('a.b.c')).toBe(a)
    expect(rows.nearest('z')).toBe(root)
    // Without an IntersectionObserver (here, in Node) every row counts as on screen.
    expect(rows.onScreen(a as HTMLElement)).toBe(true)
    rows.attach('a', null)
    expect(rows.nearest('a.b')).toBe(root)
    expect(rows.get('a')).toBeUndefined()
  })
})

describe('key expiry', () => {
  const now = Date.parse('2026-01-10T12:00:00Z')
  it('turns each choice into expiresAt, or a problem', () => {
    expect(expiryOf('never', '', now)).toEqual({})
    expect(expiryOf('7', '', now)).toEqual({ expiresAt: '2026-01-17T12:00:00.000Z' })
    expect(expiryOf('date', '', now)).toEqual({ problem: expect.any(String) })
    expect(expiryOf('date', '2025-12-31', now)).toEqual({ problem: 'Choose a date in the future' })
    const onDate = expiryOf('date', '2026-02-01', now) as { expiresAt: string }
    expect(new Date(onDate.expiresAt).getTime()).toBe(new Date('2026-02-01T23:59:59').getTime())
  })
})

describe('connect snippets', () => {
  it('fill in the origin, the project and the key', () => {
    const s = snippetsFor('https://c.example.com', '@alice/demo', 'cdk_secret')
    expect(s.base).toBe('https://c.example.com/api/@alice/demo')
    expect(s.curl).toContain("curl -s https://c.example.com/api/@alice/demo/content -H 'authorization: Bearer cdk_secret'")
    expect(s.sdk).toContain("createClient({ baseUrl: 'https://c.example.com', token: 'cdk_secret' })")
    expect(s.page).toContain('"socket.io-client": "https://c.example.com/socket.io/socket.io.esm.min.js"')
    const placeholder = snippetsFor('https://c.example.com', '@alice/demo', '$CONTENTD_KEY')
    expect(placeholder.curl).toContain('"authorization: Bearer $CONTENTD_KEY"')
    expect(placeholder.sdk).toContain('token: process.env.CONTENTD_KEY')
    expect(s.events).toContain("new EventSource('https://c.example.com/api/@alice/demo/content/events?access_token=cdk_secret')")
    expect(placeholder.events).not.toContain('$CONTENTD_KEY')
  })

  it('give a read-only key no write example (it would answer 403), a read-write key both', () => {
    const read = snippetsFor('https://c.example.com', '@alice/demo', 'cdk_r', 'read')
    expect(read.curl).toBe("# read the whole content\ncurl -s https://c.example.com/api/@alice/demo/content -H 'authorization: Bearer cdk_r'")
    expect(read.sdk).not.toMatch(/increment|set\(|push\(/)
    expect(read.sdk).toContain('await project.get()')
    const write = snippetsFor('https://c.example.com', '@alice/demo', 'cdk_w', 'write')
    expect(write.curl).toContain('/content/increment')
    expect(write.sdk).toContain("await project.increment('data.visits')")
    expect(snippetsFor('https://c.example.com', '@alice/demo', '$CONTENTD_KEY').curl).toContain('/content/increment')
  })

  it('install the SDK the way the README does, not from a registry name nobody here owns', () => {
    const readme = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8')
    for (const line of INSTALL.split('\n')) {
      const command = (line.split('#')[0] as string).trim()
      expect(readme, command).toContain(`\`${command}\``)
    }
    expect(snippetsFor('https://c.example.com', '@alice/demo', 'cdk_x').install).toBe(INSTALL)
    expect(INSTALL).not.toMatch(/npm install contentd\b/)
  })

  it('offer only live keys: listed by the server (not revoked), not expired, reaching the project, not narrowed', () => {
    const now = Date.parse('2026-06-01T00:00:00Z')
    const key = (id: string, extra: Partial<{ projects: string[] | null, expiresAt: string | null, paths: string[] | null, ops: Array<'set'> | null }> = {}) => ({ id, key: `cdk_${id}`, name: id, prefix: 'cdk_', permission: 'read' as const, projects: null, paths: null, ops: null, expiresAt: null, createdAt: '', ...extra })
    const created = [key('live'), key('revoked'), key('expired', { expiresAt: '2026-05-31T23:59:59Z' }), key('later', { expiresAt: '2026-06-02T00:00:00Z' }), key('elsewhere', { projects: ['@alice/other'] }), key('narrowed', { paths: ['stats'] }), key('set-only', { ops: ['set'] })]
    const listed = new Set(['live', 'expired', 'later', 'elsewhere', 'narrowed', 'set-only'])
    expect(usableKeys(created, '@alice/demo', listed, now).map(k => k.id)).toEqual(['live', 'later'])
    // Until the server has answered, no key is offered (a revoked one would be preselected).
    expect(usableKeys(created, '@alice/demo', null, now)).toEqual([])
  })

  it('offer only keys that reach the project', () => {
    const key = (projects: string[] | null) => ({ id: 'k', key: 'cdk_x', name: 'n', prefix: 'cdk_x', permission: 'read' as const, projects, paths: null, ops: null, expiresAt: null, createdAt: '' })
    expect(inScope(key(null), '@alice/demo')).toBe(true)
    expect(inScope(key(['@alice/demo']), '@alice/demo')).toBe(true)
    expect(inScope(key(['@alice/other']), '@alice/demo')).toBe(false)
  })
})

describe('key narrowing', () => {
  it('reads the paths field and the ticked operations into paths and ops, leaving out what is empty', () => {
    expect(narrowingOf('', [])).toEqual({})
    expect(narrowingOf(' , ', [])).toEqual({})
    expect(narrowingOf('stats, posts.0 ,stats', [])).toEqual({ paths: ['stats', 'posts.0'] })
    expect(narrowingOf('', ['set', 'increment'])).toEqual({ ops: ['increment', 'set'] })
    expect(narrowingOf('stats', ['push'])).toEqual({ paths: ['stats'], ops: ['push'] })
  })

  it('refuses a path the server would refuse, and more paths than a key takes', () => {
    expect(narrowingOf('stats..visits', [])).toEqual({ problem: expect.stringContaining('empty segment') })
    expect(narrowingOf('$bad', [])).toEqual({ problem: expect.stringContaining('"$bad"') })
    const many = Array.from({ length: MAX_KEY_PATHS + 1 }, (_, i) => `p${i}`).join(',')
    expect(narrowingOf(many, [])).toEqual({ problem: `A key takes at most ${MAX_KEY_PATHS} paths.` })
  })

  it('says a key\'s narrowing back for the list', () => {
    expect(describeNarrowing({ paths: null, ops: null })).toBeNull()
    expect(describeNarrowing({ paths: ['stats', 'posts'], ops: null })).toBe('paths stats, posts')
    expect(describeNarrowing({ paths: ['stats'], ops: ['increment', 'set'] })).toBe('paths stats · ops increment, set')
  })
})

describe('content as a .json file', () => {
  it('names the download after the project and its version', () => {
    expect(exportFileName('@alice/demo', 12)).toBe('alice-demo-v12.json')
    expect(exportFileName('@alice/my_site-2', undefined)).toBe('alice-my_site-2.json')
  })

  it('reads a file as content only when it holds a JSON object', () => {
    expect(readImport('{"title": "Hi", "n": [1]}')).toEqual({ ok: true, value: { title: 'Hi', n: [1] } })
    expect(readImport('[1, 2]')).toEqual({ ok: false, message: expect.stringContaining('must hold a JSON object') })
    expect(readImport('null')).toEqual({ ok: false, message: expect.stringContaining('must hold a JSON object') })
    expect(readImport('{"title": }')).toEqual({ ok: false, message: expect.stringMatching(/^Not valid JSON/) })
  })
})

describe('history text', () => {
  it('names actors without secrets', () => {
    expect(actorName({ type: 'user', name: '@ada' })).toBe('@ada')
    expect(actorName({ type: 'key', id: 'k1', name: 'deploy' })).toBe('key deploy')
    expect(actorName({ type: 'system', name: 'cli' })).toBe('cli')
    expect(actorName(undefined)).toBe('unknown')
  })

  it('says what an entry touched', () => {
    expect(entryTarget({ op: 'set', path: 'price' })).toBe('price')
    expect(entryTarget({ op: 'insert', path: 'tags', index: 0 })).toBe('tags at 0')
    expect(entryTarget({ op: 'update' })).toBe('the whole content')
    expect(entryTarget({ op: 'revert', revertedTo: 3 })).toBe('the content of v3')
  })

  it('lists the paths that differ between two versions', () => {
    const then: Json = { a: 1, b: { c: [1, 2], d: 'x' }, gone: true }
    const now: Json = { a: 1, b: { c: [1, 3], d: 'x', e: null }, added: 0 }
    expect(diffPaths(then, now).differences).toEqual([
      { path: 'gone', kind: 'removed' },
      { path: 'added', kind: 'added' },
      { path: 'b.e', kind: 'added' },
      { path: 'b.c.1', kind: 'changed' }
    ])
    expect(diffPaths(then, then)).toEqual({ differences: [], truncated: false })
    expect(diffPaths({ a: 1, b: 2, c: 3 }, {}, 2)).toEqual({ differences: [{ path: 'a', kind: 'removed' }, { path: 'b', kind: 'removed' }], truncated: true })
    expect(diffPaths({ a: [1] }, { a: { 0: 1 } }).differences).toEqual([{ path: 'a', kind: 'changed' }])
  })
})

describe('webhook form', () => {
  it('reads the paths field as a list, refusing bad paths', () => {
    expect(parsePathList('')).toEqual({ ok: true, paths: [] })
    expect(parsePathList(' site , stock.items,')).toEqual({ ok: true, paths: ['site', 'stock.items'] })
    expect(parsePathList('a..b')).toEqual({ ok: false, message: 'Path "a..b" has an empty segment.' })
    expect(parsePathList('$x')).toEqual({ ok: false, message: 'Path "$x" starts with "$".' })
    expect(WEBHOOK_OP_CHOICES).toContain('revert')
  })
})

describe('JSON text', () => {
  it('says where a syntax error is, by line and column', () => {
    expect(locate('{\n  "a": 1,\n}', 'Unexpected token } in JSON at position 12')).toBe('Unexpected token } in JSON at position 12 (line 3, column 1)')
    expect(locate('x', 'no position here')).toBe('no position here')
    // Newer engines say the line and column themselves: the place is said once.
    expect(locate('{\n  "a": 1,\n}', 'Expected double-quoted property name in JSON at position 12 (line 3 column 1)')).toBe('Expected double-quoted property name in JSON at position 12 (line 3, column 1)')
    const parsed = parseJsonText('{"a": 1,}')
    expect(parsed.ok).toBe(false)
    if (!parsed.ok) expect(parsed.message).toMatch(/^Not valid JSON: /)
    expect(parseJsonText(pretty({ a: [1, { b: null }] }))).toEqual({ ok: true, value: { a: [1, { b: null }] } })
  })
})

describe('schema text', () => {
  it('starts a schema from the content: its top-level keys with their types', () => {
    expect(starterSchema({ title: 'x', count: 3, ratio: 0.5, tags: [], meta: {}, gone: null, on: true })).toEqual({
      $schema: SCHEMA_DIALECT,
      type: 'object',
      properties: { title: { type: 'string' }, count: { type: 'number' }, ratio: { type: 'number' }, tags: { type: 'array' }, meta: { type: 'object' }, gone: { type: 'null' }, on: { type: 'boolean' } }
    })
    expect(starterSchema(undefined)).toEqual({ $schema: SCHEMA_DIALECT, type: 'object', properties: {} })
    const many = Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`k${i}`, i]))
    expect(Object.keys(starterSchema(many).properties as object)).toHaveLength(50)
  })

  it('takes an object or a boolean, and refuses other JSON and non-JSON', () => {
    expect(parseSchemaText('{"type": "object"}')).toEqual({ ok: true, schema: { type: 'object' } })
    expect(parseSchemaText('false')).toEqual({ ok: true, schema: false })
    for (const text of ['[]', '"object"', '3', 'null']) expect(parseSchemaText(text), text).toMatchObject({ ok: false, message: expect.stringContaining('A schema is a JSON object') })
    expect(parseSchemaText('{type: object}')).toMatchObject({ ok: false, message: expect.stringMatching(/^Not valid JSON/) })
  })
})
