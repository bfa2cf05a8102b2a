// The console's browser modules from node_modules (server/http/vendor-modules.ts): the import
// graph of the editor packages is read from the installed files, and every module it names
// is one the import map lists, so the browser never meets an unmapped bare import.
import { existsSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { consolePage, consolePolicy, EDITOR_PACKAGES } from '../../server/http/dashboard.js'
import { moduleImports, vendorGraph } from '../../server/http/vendor-modules.js'

describe('vendor modules for the console', () => {
  it('reads import and export statements, not words in comments', () => {
    const source = [
      "import { a } from '@x/a'",
      'export { b } from "./b.js"',
      "import 'side-effect'",
      'export * from "star"',
      '// grammar file as `@context exportName from "module"`.',
      'const s = "import from \'nope\'"'
    ].join('\n')
    expect(moduleImports(source).sort()).toEqual(['./b.js', '@x/a', 'side-effect', 'star'])
  })

  it('maps every bare import the editor packages reach, each to an ES module file', () => {
    const { modules, packages } = vendorGraph(EDITOR_PACKAGES)
    const mapped = new Set(modules.map(m => m.specifier))
    for (const name of ['@codemirror/view', '@codemirror/state', '@lezer/json', 'style-mod', 'w3c-keyname', 'crelt', '@marijn/find-cluster-break']) expect(mapped).toContain(name)
    for (const m of modules) {
      expect(existsSync(m.file)).toBe(true)
      expect(m.file).not.toMatch(/\.cjs$/)
      expect(m.url.startsWith(`/vendor/${m.specifier}/`)).toBe(true)
      for (const imported of moduleImports(readFileSync(m.file, 'utf8'))) if (!imported.startsWith('.')) expect(mapped).toContain(imported)
    }
    expect(packages.map(p => p.name).sort()).toEqual([...mapped].sort())
  })

  it('the page names its nonce once, and the policy allows styles only from here or with that nonce', () => {
    const template = '<head><!-- contentd:nonce -->\n<!-- contentd:importmap --></head>'
    const { withNonce, scriptHash } = consolePage(template, [{ specifier: 'preact', url: '/vendor/preact.mjs', file: '/x' }])
    expect(withNonce('abc')).toContain('<meta property="csp-nonce" nonce="abc">')
    expect(withNonce('abc')).toContain('<script type="importmap">')
    const helmet = "default-src 'self';script-src 'self';script-src-attr 'none';style-src 'self' https: 'unsafe-inline';upgrade-insecure-requests"
    expect(consolePolicy(helmet, scriptHash, 'abc')).toBe(`default-src 'self';script-src 'self' ${scriptHash};script-src-attr 'none';style-src 'self' 'nonce-abc';upgrade-insecure-requests`)
  })
})
