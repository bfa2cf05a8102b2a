// The Connect tab's examples for one project and key: REST base URL, curl, the SDK, a page
// without a bundler, and EventSource. Pure: tested in test/console/pure.test.ts (and the curl one is run
// by the browser test).
import type { CreatedApiKey } from '../shared/client/index.js'

export const PLACEHOLDER = '$CONTENTD_KEY'

export function inScope (key: CreatedApiKey, project: string): boolean {
  return key.projects === null || key.projects.includes(project)
}

export function snippetsFor (origin: string, project: string, key: string) {
  const base = `${origin}/api/${project}`
  const header = key === PLACEHOLDER ? `"authorization: Bearer ${key}"` : `'authorization: Bearer ${key}'`
  const token = key === PLACEHOLDER ? 'process.env.CONTENTD_KEY' : `'${key}'`
  return {
    base,
    curl: [
      '# read the whole content',
      `curl -s ${base}/content -H ${header}`,
      '',
      '# add 1 to data.visits (created if missing)',
      `curl -s ${base}/content/increment -H ${header} \\`,
      `  -H 'content-type: application/json' -d '{"path":"data.visits","value":1}'`
    ].join('\n'),
    sdk: [
      "import { createClient } from 'contentd/client'",
      '',
      `const client = createClient({ baseUrl: '${origin}', token: ${token} })`,
      `const project = client.project('${project}')`,
      '',
      "await project.increment('data.visits')",
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
