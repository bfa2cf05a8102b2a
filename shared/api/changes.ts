// The change log (docs/design.md §9): one entry per committed change, the same object over
// HTTP (…/content/changes), SSE and the Socket.IO `change` event.
import { z } from 'zod'
import { OPERATION_NAMES } from '../operations.js'
import { displayName, isoTime, jsonValue } from './common.js'

export const actor = z.union([
  z.object({ type: z.literal('user'), name: displayName }),
  z.object({ type: z.literal('key'), id: z.string(), name: z.string().meta({ description: "The key's name (never its secret)" }) }),
  z.object({ type: z.literal('system'), name: z.string().meta({ description: '"cli": content imported by the operator' }) }),
  z.object({ type: z.literal('app'), sub: z.string().meta({ description: "An app user (docs/rules.md): the `sub` of the app's own token" }) })
]).meta({ description: 'Who made the change: a user (session), an API key, the operator (system), or an app user (app). Never a secret.' })
export type ChangeActor = z.infer<typeof actor>

export const changeOp = z.enum([...OPERATION_NAMES, 'revert', 'batch', 'patch'])

export const changeEntry = z.object({
  project: z.string().meta({ description: 'The project, e.g. "@alice/demo"' }),
  version: z.number().int().min(1).meta({ description: "The project's version right after this change" }),
  op: changeOp,
  path: z.string().optional().meta({ description: 'Dot path; absent for update and revert' }),
  value: jsonValue().optional().meta({ description: 'increment/decrement: the amount; set/push/insert: the value; update: the new content; revert: the content restored. Absent for delete.' }),
  index: z.number().int().optional().meta({ description: 'insert only' }),
  operations: z.array(jsonValue()).optional().meta({ description: 'batch: its operations with dot paths; patch: the RFC 6902 operations as applied' }),
  revertedTo: z.number().int().optional().meta({ description: 'revert only: the version whose content was restored' }),
  projected: z.literal(true).optional().meta({ description: 'Only on a path subscription or `changes?path=` (docs/design.md §15): a `set` or `delete` of the path\'s new value standing for a change above the path' }),
  at: isoTime.meta({ description: 'Commit time' }),
  actor
}).meta({ description: 'One entry of the change log (the same object as the Socket.IO `change` event).' })
export type ChangeEntryView = z.infer<typeof changeEntry>

export const changesPage = z.object({
  version: z.number().int().min(0).meta({ description: "The project's current version" }),
  changes: z.array(changeEntry).meta({ description: 'Entries with a version above `since`, ascending' }),
  more: z.boolean().meta({ description: 'More entries follow (the page ended at `limit` or at CHANGES_PAGE_BYTES): ask again with the last version as `since`' })
})
export type ChangesPageView = z.infer<typeof changesPage>

export const CHANGE_RESPONSES = { Actor: actor, Change: changeEntry, ChangesPage: changesPage }
