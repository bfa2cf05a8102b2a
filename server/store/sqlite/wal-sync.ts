// The group commit's fsync, on libuv's thread pool instead of the event loop (issue 18,
// content-writer.ts): an fdatasync of the store's WAL file after a batch committed with
// synchronous=NORMAL. On Linux an fsync flushes the file's dirty pages whichever descriptor
// asks, so a read-only descriptor of our own does; the WAL keeps its inode while any
// connection is open (a checkpoint rewrites it from the start, it is deleted only when the
// last connection closes), so it is opened once, at the first sync, when it surely exists.
import { closeSync, fdatasync, openSync } from 'node:fs'

/** What the store needs of it; a test can wrap the real one to hold or fail a sync. */
export interface WalSyncer {
  sync: (done: (error: Error | null) => void) => void
  close: () => void
}

export class WalSync implements WalSyncer {
  private fd: number | undefined

  constructor (private readonly walPath: string) {}

  sync (done: (error: Error | null) => void): void {
    try {
      this.fd ??= openSync(this.walPath, 'r')
    } catch (error) {
      done(error as Error)
      return
    }
    fdatasync(this.fd, done)
  }

  /** After the last sync returned (the store drains its writer first). */
  close (): void {
    if (this.fd !== undefined) closeSync(this.fd)
    this.fd = undefined
  }
}
