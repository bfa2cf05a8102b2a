// The Connect tab's examples for one project and key: REST base URL, curl, the SDK and how to
// install it, a page without a bundler, and EventSource. Pure: tested in
// test/console/pure.test.ts (and the curl one is run by the browser test).
import type { ApiKeyInfo, CreatedApiKey, KeyPermission } from '../shared/client/index.js'

export const PLACEHOLDER = '$CONTENTD_KEY'

/** How an app installs the SDK: the README's way ("Use it from your app"); no registry has it. */
export const INSTALL = [
  'npm install /path/to/contentd                          # a clone of contentd',
  'npm install git+https://<your git host>/contentd.git   # or straight from git'
].join('\n')

export function inScope (key: ApiKeyInfo, project: string): boolean {
  return key.projects === null || key.projects.includes(project)
}

/**
 * The keys the examples may show: made in this tab (only then is the secret known), reaching
 * the project, and live: still listed by the server (a revoked key is not) and not expired.
 * `listed` is the ids GET /api/keys answered; null until it has, and then nothing is offered.
 */
export function usableKeys (created: readonly CreatedApiKey[], project: string, listed: ReadonlySet<string> | null, now = Date.now()): CreatedApiKey[] {
  if (listed === null) return []
  // A narrowed key (paths or ops) never reads the whole content, which every example does.
  return created.filter(k => inScope(k, project) && listed.has(k.id) && k.paths === null && k.ops === null && (k.expiresAt === null || Date.parse(k.expiresAt) > now))
}

/**
 * `permission` is the chosen key's: a read-only key gets no write example (it would answer
 * 403). With the placeholder (null) both are shown.
 */
export function snippetsFor (origin: string, project: string, key: string, permission: KeyPermission | null = null) {
  const base = `${origin}/api/${project}`
  const header = key === PLACEHOLDER ? `"authorization: Bearer ${key}"` : `'authorization: Bearer ${key}'`
  const token = key === PLACEHOLDER ? 'process.env.CONTENTD_KEY' : `'${key}'`
  const writes = permission !== 'read'
  return {
    base,
    install: INSTALL,
    curl: [
      '# read the whole content',
      `curl -s ${base}/content -H ${header}`,
      ...(writes
        ? ['', '# add 1 to data.visits (created if missing)', `curl -s ${base}/content/increment -H ${header} \\`, `  -H 'content-type: application/json' -d '{"path":"data.visits","value":1}'`]
        : [])
    ].join('\n'),
    sdk: [
      "import { createClient } from 'contentd/client'",
      '',
      `const client = createClient({ baseUrl: '${origin}', token: ${token} })`,
      `const project = client.project('${project}')`,
      '',
      writes ? "await project.increment('data.visits')" : 'console.log(await project.get())   // the content now',
      'project.subscribe(content => console.log(content))   // the live content, after every change'
    ].join('\n'),
    page: [
      '<script type="importmap">',
      `  { "imports": { "socket.io-client": "${origin}/socket.io/socket.io.esm.min.js" } }`,
      '</script>',
      '<script type="module">',
      `  import { createClient } from '${origin}/shared/client/index.js'`,
      `  const client = createClient({ baseUrl: '${origin}', token: '${key === PLACEHOLDER ? 'cdk_…a read-only key…' : key}' })`,
      `  client.project('${project}').subscribe(content => {`,
      '    document.body.textContent = JSON.stringify(content)',
      '  })',
      '</script>'
    ].join('\n'),
    // Server-Sent Events (docs/design.md §9): shown only where the server has them.
    events: [
      `const events = new EventSource('${base}/content/events?access_token=${key === PLACEHOLDER ? 'cdk_…a read-only key…' : key}')`,
      "events.addEventListener('snapshot', e => console.log('content', JSON.parse(e.data).content))",
      "events.addEventListener('change', e => console.log('change', JSON.parse(e.data)))   // {version, op, path, value, at, actor}"
    ].join('\n')
  }
}
