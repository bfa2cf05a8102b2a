// `contentd export --all` and `contentd import --all` (docs/design.md §18,
// docs/operations.md "Moving between stores"): the whole instance as JSON lines
// (server/store/instance-records.ts), streamed both ways: export writes a line per record as
// the store reads it, waiting when stdout is slow; import parses and checks a line at a time
// while the store writes, all or nothing.
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import type { Readable, Writable } from 'node:stream'
import { headerLine, recordsOfLines, type ImportCounts } from '../store/instance-records.js'
import type { Store } from '../store/types.js'

/** Writes the instance to `out`; resolves with how many records (after the header). */
export async function exportAll (store: Store, out: Writable): Promise<number> {
  let records = 0
  const write = async (line: string): Promise<void> => {
    if (!out.write(line + '\n')) await once(out, 'drain')
  }
  await write(headerLine())
  for await (const record of store.exportRecords()) {
    await write(JSON.stringify(record))
    records += 1
  }
  return records
}

/** Loads the lines of `input` into the (empty) store. */
export async function importAll (store: Store, input: Readable): Promise<ImportCounts> {
  const lines = createInterface({ input, crlfDelay: Infinity })
  try {
    return await store.importRecords(recordsOfLines(lines))
  } finally {
    lines.close()
  }
}

const NAMES: Record<keyof ImportCounts, string> = {
  user: 'users',
  apiKey: 'API keys',
  project: 'projects',
  schema: 'schemas',
  content: 'contents',
  member: 'members',
  checkpoint: 'checkpoints',
  change: 'changes',
  webhook: 'webhooks',
  rules: 'rules documents',
  appAuth: 'app sign-in settings'
}

/** "2 users, 1 API keys, …": what an import loaded. */
export function describeCounts (counts: ImportCounts): string {
  return (Object.keys(NAMES) as Array<keyof ImportCounts>).filter(kind => kind !== 'content').map(kind => `${counts[kind]} ${NAMES[kind]}`).join(', ')
}
