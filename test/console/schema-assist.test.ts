// The JSON editors' schema-aware help (console/editor/schema-assist.ts), without a browser.
import { describe, expect, it } from 'vitest'
import { keySuggestions, MAX_ISSUES, schemaAt, schemaEditingSuggestions, schemaIssues, valueSuggestions } from '../../console/editor/schema-assist.js'

const SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  required: ['title'],
  properties: {
    title: { type: 'string', description: 'Shown on the home page' },
    status: { enum: ['draft', 'live'] },
    stats: { $ref: '#/$defs/stats' },
    tags: { type: 'array', items: { type: 'string' } },
    pair: { prefixItems: [{ type: 'integer' }, { type: 'boolean' }] }
  },
  additionalProperties: false,
  $defs: { stats: { type: 'object', properties: { visits: { type: 'integer', minimum: 0 }, public: { type: 'boolean' } } } }
}

describe('schema-assist', () => {
  it('finds the schema of a path through properties, items, prefixItems and local $ref', () => {
    expect(schemaAt(SCHEMA, ['stats', 'visits'])).toEqual({ type: 'integer', minimum: 0 })
    expect(schemaAt(SCHEMA, ['tags', 5])).toEqual({ type: 'string' })
    expect(schemaAt(SCHEMA, ['pair', 1])).toEqual({ type: 'boolean' })
    // additionalProperties: false: nothing else is allowed.
    expect(schemaAt(SCHEMA, ['other'])).toBe(false)
    expect(schemaAt({ $ref: 'https://example.com/x' }, ['a'])).toBeUndefined()
  })

  it('offers the keys a schema names and the object lacks, required ones marked, with descriptions', () => {
    expect(keySuggestions(SCHEMA, [], ['tags', 'pair', 'status'])).toEqual([
      { label: 'title', detail: 'string, required', info: 'Shown on the home page' },
      { label: 'stats', detail: 'object' }
    ])
    expect(keySuggestions(SCHEMA, ['stats'], []).map(s => s.label)).toEqual(['visits', 'public'])
    expect(keySuggestions(true, [], [])).toEqual([])
  })

  it('offers enum, const and boolean values', () => {
    expect(valueSuggestions(SCHEMA, ['status']).map(s => s.label)).toEqual(['"draft"', '"live"'])
    expect(valueSuggestions(SCHEMA, ['stats', 'public']).map(s => s.label)).toEqual(['true', 'false'])
    expect(valueSuggestions({ properties: { v: { const: 2 } } }, ['v'])).toEqual([{ label: '2', detail: 'const' }])
    expect(valueSuggestions(SCHEMA, ['title'])).toEqual([])
  })

  it('says what the simple keywords refuse, at the path of each', () => {
    expect(schemaIssues(SCHEMA, { title: 'Hi', status: 'live', stats: { visits: 1 }, tags: ['a'], pair: [1, true] })).toEqual([])
    expect(schemaIssues(SCHEMA, { status: 'gone', stats: { visits: 0.5 }, tags: ['a', 2], pair: [1, 'x'], extra: 1 })).toEqual([
      { path: [], message: 'must have "title"' },
      { path: ['status'], message: 'must be one of "draft", "live"' },
      { path: ['stats', 'visits'], message: 'must be integer' },
      { path: ['tags', 1], message: 'must be string' },
      { path: ['pair', 1], message: 'must be boolean' },
      { path: ['extra'], message: '"extra" is not allowed here' }
    ])
    // An integer is a number.
    expect(schemaIssues({ type: 'number' }, 3)).toEqual([])
    expect(schemaIssues(false, 3)).toEqual([{ path: [], message: 'not allowed here' }])
  })

  it('stops at MAX_ISSUES, and a schema that refers to itself ends', () => {
    const many = Array.from({ length: 200 }, (_, i) => i)
    expect(schemaIssues({ items: { type: 'string' } }, many)).toHaveLength(MAX_ISSUES)
    expect(schemaAt({ $ref: '#' }, ['a'])).toBeUndefined()
  })

  it('helps write a schema: keywords in a schema object, none for chosen names, type names as values of type', () => {
    expect(schemaEditingSuggestions([], 'key', ['type']).map(s => s.label)).toContain('properties')
    expect(schemaEditingSuggestions([], 'key', ['type']).map(s => s.label)).not.toContain('type')
    expect(schemaEditingSuggestions(['properties'], 'key', [])).toEqual([])
    expect(schemaEditingSuggestions(['properties', 'title'], 'key', []).length).toBeGreaterThan(10)
    expect(schemaEditingSuggestions(['type'], 'value', []).map(s => s.label)).toContain('"integer"')
    expect(schemaEditingSuggestions(['type', 1], 'value', []).map(s => s.label)).toContain('"null"')
    expect(schemaEditingSuggestions(['minimum'], 'value', [])).toEqual([])
  })
})
