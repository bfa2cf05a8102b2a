// The add-a-webhook form's pure parts: the operations a filter may name (docs/webhooks.md;
// the server's list is shared/webhooks.ts, which the browser does not load: it needs zod),
// and the paths field read as a list. test/console/pure.test.ts covers them.
import { keyProblem } from '../../shared/path.js'

export const WEBHOOK_OP_CHOICES = ['set', 'increment', 'decrement', 'delete', 'push', 'insert', 'update', 'revert'] as const

/** "site, stock.items" → ["site", "stock.items"]; '' → [] (every path). */
export function parsePathList (text: string): { ok: true, paths: string[] } | { ok: false, message: string } {
  const paths = text.split(',').map(part => part.trim()).filter(part => part !== '')
  for (const path of paths) {
    for (const segment of path.split('.')) {
      const problem = segment === '' ? 'has an empty segment' : keyProblem(segment)
      if (problem) return { ok: false, message: `Path "${path}" ${problem}.` }
    }
  }
  return { ok: true, paths }
}
