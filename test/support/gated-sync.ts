// The real WalSync (server/store/sqlite/wal-sync.ts) behind a gate, for the group commit's
// tests: while `holding`, syncs wait in `held` until released; `failWith` makes them fail.
import type { SqliteStore } from '../../server/store/sqlite/sqlite-store.js'
import { WalSync } from '../../server/store/sqlite/wal-sync.js'
import type { ProjectRecord } from '../../server/store/types.js'
import { openSqliteStore } from './stores.js'

type Done = (error: Error | null) => void

export class GatedSync {
  holding = false
  readonly held: Array<() => void> = []
  started = 0
  failWith: Error | undefined
  private readonly real: WalSync

  constructor (walPath: string) { this.real = new WalSync(walPath) }

  sync (done: Done): void {
    this.started++
    const run = (): void => {
      if (this.failWith) { done(this.failWith); return }
      this.real.sync(done)
    }
    if (this.holding) this.held.push(run)
    else run()
  }

  release (): void {
    this.holding = false
    for (const run of this.held.splice(0)) run()
  }

  close (): void { this.real.close() }
}

/** A store on `dataDir` whose WAL syncs go through a GatedSync, handed to `onGate`. */
export function openGatedStore (dataDir: string, onGate: (gate: GatedSync) => void): SqliteStore {
  return openSqliteStore({
    dataDir,
    contentLimitBytes: 1024 * 1024,
    cacheBytes: 1024 * 1024,
    walSync: path => {
      const gate = new GatedSync(path)
      onGate(gate)
      return gate
    }
  })
}

const NOW = '2026-01-01T00:00:00.000Z'

/** alice and her project @alice/demo (id p1), in a new store. */
export async function aliceWithProject (store: SqliteStore): Promise<ProjectRecord> {
  await store.createUser({ id: 'u_alice', username: 'alice', passwordHash: 'x', createdAt: NOW })
  return await store.createProject({ id: 'p1', ownerId: 'u_alice', ownerName: 'alice', slug: 'demo', name: 'Demo', createdAt: NOW })
}
