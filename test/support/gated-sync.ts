// The real WalSync (server/store/sqlite/wal-sync.ts) behind a gate, for the group commit's
// tests: while `holding`, syncs wait in `held` until released; `failWith` makes them fail.
import { WalSync } from '../../server/store/sqlite/wal-sync.js'

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
