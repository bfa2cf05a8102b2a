// The SDK as a package: `contentd/client` resolves to the built module with its types, its
// module graph uses nothing Node-only (so bundlers can ship it to browsers), and the packed
// tarball installs into another app.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PROJECT_ROOT, startServerProcess, type ServerProcess } from '../support/server-process.js'

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

// The package as another app gets it: `npm pack`, then `npm install <tarball>` in a fresh app
// directory outside the repository, whose script imports `contentd/client` and talks to a
// real server. Install scripts are skipped: they only build argon2's and better-sqlite3's
// native code (minutes from source where the prebuilt binaries do not load, as on this
// machine) and neither the client nor `contentd --help` loads native code. Dependencies come
// from npm's cache when it has them (--prefer-offline), else from the registry.
describe('the packed package, installed into another app', { timeout: 180_000 }, () => {
  let work: string
  let app: string
  let packed: { filename: string, files: Array<{ path: string }> }
  let server: ServerProcess

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'contentd-pack-'))
    app = join(work, 'app')
    mkdirSync(app)
    // npm pack runs `prepare`, which finds the build current (the global setup built it).
    const pack = npm(['pack', '--json', '--pack-destination', work], PROJECT_ROOT)
    packed = (JSON.parse(pack) as Array<typeof packed>)[0] as typeof packed
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'an-app', private: true, type: 'module' }))
    npm(['install', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', join(work, packed.filename)], app)
    server = await startServerProcess()
  }, 180_000)

  afterAll(async () => {
    await server?.stop()
    if (server) rmSync(server.dataDir, { recursive: true, force: true })
    if (work) rmSync(work, { recursive: true, force: true })
  })

  it('holds the built server, the client with its types, the dashboard and the licence; no sources, tests or source maps', () => {
    const files = packed.files.map(f => f.path)
    for (const needed of ['package.json', 'README.md', 'dist/server/index.js', 'dist/server/cli/main.js', 'dist/shared/client/index.js', 'dist/shared/client/index.d.ts', 'public/index.html']) {
      expect(files, needed).toContain(needed)
    }
    expect(files.filter(f => !/^(dist\/(server|shared)\/|public\/)/.test(f)).sort()).toEqual(['LICENSE', 'README.md', 'package.json'])
    expect(files.filter(f => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([])
    expect(files.filter(f => f.endsWith('.map') || f.includes('.tsbuildinfo') || f.includes('.build-stamp'))).toEqual([])
    // The server's declarations serve no one; the client's are its types.
    expect(files.filter(f => f.startsWith('dist/server/') && f.endsWith('.d.ts'))).toEqual([])
  })

  it('gives the app a working contentd/client: signup, me(), a write and a live copy against a real server', async () => {
    writeFileSync(join(app, 'main.mjs'), `
      import { createClient } from 'contentd/client'
      const baseUrl = process.argv[2]
      const post = (path, body, token) => fetch(baseUrl + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: 'Bearer ' + token } : {}) },
        body: JSON.stringify(body)
      }).then(r => r.json())
      const { token } = await post('/api/auth/signup', { username: 'app-user', password: 'an app password' })
      await post('/api/projects', { slug: 'demo' }, token)
      const client = createClient({ baseUrl, token })
      const me = await client.me()
      const demo = client.project('@app-user/demo')
      await demo.increment('visits', 2)
      const live = demo.subscribe(() => {})
      await live.ready
      console.log(JSON.stringify({ resolved: import.meta.resolve('contentd/client'), me: me.username, stored: await demo.get(), live: live.content }))
      client.close()
    `)
    const run = spawnSync(process.execPath, ['main.mjs', server.url], { cwd: app, encoding: 'utf8', timeout: 30_000 })
    expect(run.stderr).toBe('')
    const result = JSON.parse(run.stdout)
    expect(result.resolved).toBe(pathToFileURL(join(realpathSync(app), 'node_modules/contentd/dist/shared/client/index.js')).href)
    expect(result).toMatchObject({ me: '@app-user', stored: { visits: 2 }, live: { visits: 2 } })
  })

  it('types contentd/client for a TypeScript app (NodeNext, strict)', () => {
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, noEmit: true, skipLibCheck: false, types: [] },
      files: ['typed.ts']
    }))
    writeFileSync(join(app, 'typed.ts'), `
      import { createClient, ContentdError, type ContentdClient, type WriteResult } from 'contentd/client'
      const client: ContentdClient = createClient({ baseUrl: 'http://localhost:3000', token: 'cdk_x' })
      export const written: Promise<WriteResult> = client.project('@alice/demo').increment('visits')
      export const username: Promise<string> = client.me().then(me => me.username)
      export const isError = (e: unknown): boolean => e instanceof ContentdError
      // Real types, not any: a wrong call is an error (and an unused expect-error would be too).
      // @ts-expect-error the project reference is a string
      client.project(42)
    `)
    const tsc = spawnSync(process.execPath, [join(PROJECT_ROOT, 'node_modules/typescript/bin/tsc'), '-p', app], { cwd: app, encoding: 'utf8' })
    expect(tsc.stdout + tsc.stderr).toBe('')
    expect(tsc.status).toBe(0)
  })

  it('installs the contentd bin', () => {
    const bin = join(app, 'node_modules/.bin/contentd')
    const help = spawnSync(bin, ['--help'], { cwd: app, encoding: 'utf8' })
    expect(help.stderr).toBe('')
    expect(help.status).toBe(0)
    expect(help.stdout).toMatch(/^usage: contentd <command>/)
    expect(help.stdout).toContain('contentd user create @name')
    const wrong = spawnSync(bin, ['frobnicate'], { cwd: app, encoding: 'utf8' })
    expect(wrong.status).toBe(2)
    expect(wrong.stderr).toMatch(/^contentd: unknown command "frobnicate"\n/)
  })
})

/**
 * Runs npm, returning its stdout; a failure throws with npm's output. Without the npm_*
 * variables an enclosing `npm test` sets, which would otherwise configure this npm too.
 */
function npm (args: string[], cwd: string): string {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_')))
  const run = spawnSync('npm', args, { cwd, env, encoding: 'utf8', timeout: 170_000 })
  if (run.status !== 0) throw new Error(`npm ${args.join(' ')} failed (${run.status}):\n${run.stdout}\n${run.stderr}`)
  return run.stdout
}
