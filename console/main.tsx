// The console's entry point (docs/console.md): public/index.html loads this module, after an
// import map that resolves `preact` and the SDK's `socket.io-client` (server/http/dashboard.ts).
import { render } from 'preact'
import { App } from './app.js'

const root = document.getElementById('app')
if (root) {
  root.replaceChildren()
  render(<App />, root)
}
