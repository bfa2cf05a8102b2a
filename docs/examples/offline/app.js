// The offline example: a counter that keeps working with the server stopped. Writes go to
// IndexedDB first (the outbox), show at once, survive reloads and closed tabs, and land
// exactly once when the server is back. Settings come from the URL's hash:
//   #server=http://127.0.0.1:3000&token=cdk_…&project=@alice/demo
/* global window, document, location, URLSearchParams */
import { createClient, indexedDbStore } from '/sdk/client/index.js'

const started = performance.now()
const settings = new URLSearchParams(location.hash.slice(1))
const $ = id => document.getElementById(id)

const client = createClient({
  baseUrl: settings.get('server') ?? 'http://127.0.0.1:3000',
  token: settings.get('token') ?? undefined,
  offline: {
    store: indexedDbStore('contentd-offline-example'),
    // A write the server refused is undone in the copy; tell the user what changed meanwhile.
    onRejected: (error, { write, changes }) => {
      $('rejected').textContent = `Not saved (${error.code}): ${write.suffix} — ${changes.length} change(s) by others came first.`
    }
  }
})
const project = client.project(settings.get('project') ?? '@alice/demo')

// What the test reads: when the first content was shown, and where it came from.
window.example = { client, project, store: indexedDbStore('contentd-offline-example'), firstRenderMs: undefined, renders: 0 }

const pending = () => { $('pending').value = String(project.offline.pending) }
project.subscribe((content, version) => {
  if (window.example.firstRenderMs === undefined) window.example.firstRenderMs = performance.now() - started
  window.example.renders += 1
  $('count').value = String(content.n ?? 0)
  $('version').value = String(version)
  // A large copy is not put into the page whole: the first 2000 characters show.
  $('content').textContent = JSON.stringify(content).slice(0, 2000)
  pending()
})
client.onConnection(state => { $('connection').value = state })
$('increment').addEventListener('click', () => {
  project.increment('n').then(pending, pending)
  pending()
})
