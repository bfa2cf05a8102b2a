// The pure side of live queries (docs/design.md §16): parsing, the JSON and key orders,
// evaluation from scratch, and which children a change touches.
import { describe, expect, it } from 'vitest'
import { ContentdError } from '../../shared/errors.js'
import { childrenTouched } from '../../shared/query-effect.js'
import { compareKeys, compareOrder, CONTAINER, evaluateQuery, parseQuery, parseQueryParams, type OrderValue } from '../../shared/query.js'

const codeOf = (f: () => unknown): string | null => {
  try { f(); return null } catch (e) { return e instanceof ContentdError ? e.code : 'not a ContentdError' }
}

describe('parseQuery', () => {
  it('accepts the three order forms with defaults', () => {
    expect(parseQuery({ orderBy: 'key', limit: 1 })).toEqual({ orderBy: 'key', direction: 'asc', limit: 1, orderPath: null })
    expect(parseQuery({ orderBy: 'value', limit: 1000, direction: 'desc' })).toMatchObject({ orderBy: 'value', direction: 'desc', orderPath: null })
    expect(parseQuery({ orderBy: 'meta.rank', limit: 5, startAt: 1, endAt: 'z' })).toMatchObject({ orderPath: ['meta', 'rank'], startAt: 1, endAt: 'z' })
  })

  it.each([
    ['no limit', { orderBy: 'key' }],
    ['limit 0', { orderBy: 'key', limit: 0 }],
    ['limit 1001', { orderBy: 'key', limit: 1001 }],
    ['limit 1.5', { orderBy: 'key', limit: 1.5 }],
    ['limit as text', { orderBy: 'key', limit: '5' }],
    ['no orderBy', { limit: 5 }],
    ['orderBy a..b', { orderBy: 'a..b', limit: 5 }],
    ['orderBy $x', { orderBy: '$x', limit: 5 }],
    ['orderBy empty', { orderBy: '', limit: 5 }],
    ['direction up', { orderBy: 'key', limit: 5, direction: 'up' }],
    ['an array bound', { orderBy: 'score', limit: 5, startAt: [] }],
    ['an object bound', { orderBy: 'score', limit: 5, endAt: {} }],
    ['a number bound for keys', { orderBy: 'key', limit: 5, endAt: 3 }],
    ['an unknown member', { orderBy: 'key', limit: 5, offset: 3 }],
    ['not an object', 'key'],
    ['null', null]
  ])('refuses %s with INVALID_QUERY', (_name, query) => {
    expect(codeOf(() => parseQuery(query))).toBe('INVALID_QUERY')
  })

  it('reads query strings: canonical limit, JSON bounds, each once', () => {
    expect(parseQueryParams({ orderBy: 'score', limit: '10', startAt: '10', endAt: '"b"', direction: 'desc' }))
      .toMatchObject({ limit: 10, startAt: 10, endAt: 'b', direction: 'desc' })
    for (const params of [{ orderBy: 'score', limit: '010' }, { orderBy: 'score', limit: '1e1' }, { orderBy: 'score', limit: ['1', '2'] }, { orderBy: 'score', limit: '5', startAt: 'b' }]) {
      expect(codeOf(() => parseQueryParams(params))).toBe('INVALID_QUERY')
    }
  })
})

describe('order', () => {
  it('compares as JSON: null < false < true < numbers < strings < containers (all equal)', () => {
    const ascending: OrderValue[] = [null, false, true, -1, 0, 2.5, 10, '', 'B', 'a', 'é', CONTAINER]
    for (let i = 0; i < ascending.length - 1; i++) expect(compareOrder(ascending[i] as OrderValue, ascending[i + 1] as OrderValue)).toBeLessThan(0)
    expect(compareOrder(CONTAINER, CONTAINER)).toBe(0)
  })

  it('orders keys as Firebase: canonical integers first as numbers, then by code unit', () => {
    const keys = ['b', '10', 'A', '9', '007', '-1', '1a', '100000000000000000000', '0']
    expect([...keys].sort(compareKeys)).toEqual(['0', '9', '10', '100000000000000000000', '-1', '007', '1a', 'A', 'b'])
  })

  it('evaluates from scratch: missing as null, ties by key, desc reverses ties too', () => {
    const board = { b: { s: 1 }, a: { s: 1 }, '2': { s: 1 }, c: 'x', d: { s: [1] } }
    expect(evaluateQuery(board, parseQuery({ orderBy: 's', limit: 10 })).map(i => i.key)).toEqual(['c', '2', 'a', 'b', 'd'])
    expect(evaluateQuery(board, parseQuery({ orderBy: 's', direction: 'desc', limit: 3 })).map(i => i.key)).toEqual(['d', 'b', 'a'])
    expect(evaluateQuery('text', parseQuery({ orderBy: 'key', limit: 3 }))).toEqual([])
    expect(evaluateQuery(undefined, parseQuery({ orderBy: 'key', limit: 3 }))).toEqual([])
  })
})

describe('childrenTouched', () => {
  const at = (change: object, path: string[], wasArray = false) => {
    const t = childrenTouched(change as never, path, wasArray)
    return { all: t.all, keys: [...t.keys], tail: t.tail }
  }
  it('names the child below the path, nothing beside it, everything at or above it', () => {
    expect(at({ op: 'increment', path: 'board.a.score', value: 1 }, ['board'])).toEqual({ all: false, keys: ['a'], tail: false })
    expect(at({ op: 'set', path: 'boards.a', value: 1 }, ['board'])).toEqual({ all: false, keys: [], tail: false })
    expect(at({ op: 'set', path: 'board', value: {} }, ['board'])).toEqual({ all: true, keys: [], tail: false })
    expect(at({ op: 'delete', path: 'x' }, ['x', 'board'])).toEqual({ all: true, keys: [], tail: false })
    expect(at({ op: 'update', value: {} }, ['board'])).toMatchObject({ all: true })
    expect(at({ op: 'revert', value: {} }, ['board'])).toMatchObject({ all: true })
  })
  it('knows which array operations renumber elements', () => {
    expect(at({ op: 'push', path: 'chat', value: 1 }, ['chat'], true)).toEqual({ all: false, keys: [], tail: true })
    expect(at({ op: 'insert', path: 'chat', value: 1, index: 0 }, ['chat'], true)).toMatchObject({ all: true })
    expect(at({ op: 'delete', path: 'chat.3' }, ['chat'], true)).toMatchObject({ all: true })
    expect(at({ op: 'delete', path: 'chat.3' }, ['chat'], false)).toEqual({ all: false, keys: ['3'], tail: false })
    expect(at({ op: 'set', path: 'chat.3', value: 1 }, ['chat'], true)).toEqual({ all: false, keys: ['3'], tail: false })
  })
  it('reads batches and patches operation by operation', () => {
    expect(at({ op: 'batch', operations: [{ op: 'test', path: 'board', value: 1 }, { op: 'set', path: 'board.a', value: 1 }, { op: 'delete', path: 'board.b' }] }, ['board']))
      .toEqual({ all: false, keys: ['a', 'b'], tail: false })
    expect(at({ op: 'patch', operations: [{ op: 'move', from: '/board/a', path: '/board/b~1c' }] }, ['board'])).toEqual({ all: false, keys: ['a', 'b/c'], tail: false })
    expect(at({ op: 'patch', operations: [{ op: 'add', path: '/chat/-', value: 1 }] }, ['chat'], true)).toEqual({ all: false, keys: [], tail: true })
    expect(at({ op: 'patch', operations: [{ op: 'add', path: '/chat/0', value: 1 }] }, ['chat'], true)).toMatchObject({ all: true })
    expect(at({ op: 'patch', operations: [{ op: 'test', path: '/board', value: 1 }] }, ['board'])).toEqual({ all: false, keys: [], tail: false })
  })
})
