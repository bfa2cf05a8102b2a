// A retry whose Idempotency-Key answer expired, but whose change is still in the change log
// (docs/design.md §19): answered as the first answer was — 200, the change's version as
// ETag, the operation's own message (and `version` in the body where the first answer had
// one: batch and patch) — and nothing is applied. The first answer is rebuilt from the entry,
// because only 2xx answers made changes, and a write's 2xx answer depends on its op alone.
import { BATCH_MESSAGE } from '../../shared/batch.js'
import { PATCH_MESSAGE } from '../../shared/json-patch.js'
import { revertMessage, SUCCESS_MESSAGES } from '../../shared/operation-table.js'
import type { LoggedIdempotentChange, StoredResponse } from '../store/types.js'
import { etagFor } from '../store/version-condition.js'

export function loggedAnswer (change: LoggedIdempotentChange): StoredResponse {
  return { status: 200, body: JSON.stringify(bodyOf(change)), etag: etagFor(change.version) }
}

function bodyOf (change: LoggedIdempotentChange): { message: string, version?: number } {
  if (change.op === 'batch') return { message: BATCH_MESSAGE, version: change.version }
  if (change.op === 'patch') return { message: PATCH_MESSAGE, version: change.version }
  if (change.op === 'revert') return { message: revertMessage(change.revertedTo ?? 0) }
  const message = (SUCCESS_MESSAGES as Record<string, string | undefined>)[change.op]
  return { message: message ?? 'Change applied successfully' }
}
