// The SDK as a package: `contentd/client` resolves to the built module with its types, and
// its module graph uses nothing Node-only (so bundlers can ship it to browsers).
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { PROJECT_ROOT } from '../support/server-process.js'

describe('contentd/client', () => {
  it('is importable by its package subpath from plain Node', () => {
    const script = "const m = await import('contentd/client'); console.log(typeof m.createClient, typeof m.ContentdError, typeof m.ContentdClientError)"
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: PROJECT_ROOT, encoding: 'utf8' })
    expect(run.stderr).toBe('')
    expect(run.stdout.trim()).toBe('function function function')
    const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8'))
    expect(existsSync(join(PROJECT_ROOT, pkg.exports['./client'].types))).toBe(true)
  })

  it('imports no Node built-ins anywhere in its module graph', () => {
    const seen = new Set<string>()
    const bare = new Set<string>()
    const visit = (file: string) => {
      if (seen.has(file)) return
      seen.add(file)
      const source = readFileSync(file, 'utf8')
      for (const [, specifier] of source.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+'([^']+)'/g)) {
        if ((specifier as string).startsWith('.')) visit(resolve(dirname(file), specifier as string))
        else bare.add(specifier as string)
      }
    }
    visit(join(PROJECT_ROOT, 'dist/shared/client/index.js'))
    expect(seen.size).toBeGreaterThan(5)
    expect([...bare]).toEqual(['socket.io-client'])
  })
})
