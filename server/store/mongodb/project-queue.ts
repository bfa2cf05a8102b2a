// One writer per project per node (docs/design.md §20): a project's writes on this node run
// one after another, each from its read to its commit. Without it, concurrent writes of one
// node read the same version and all but one lose the version filter, or abort each other's
// transactions (WriteConflict), and retry; with it only writes from other nodes can race.
// Writes to different projects still run concurrently.
export class ProjectQueue {
  private readonly tails = new Map<string, Promise<unknown>>()

  run<T> (projectId: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(projectId) ?? Promise.resolve()
    const result = previous.then(task, task)
    const tail = result.catch(() => undefined)
    this.tails.set(projectId, tail)
    void tail.then(() => { if (this.tails.get(projectId) === tail) this.tails.delete(projectId) })
    return result
  }

  /** Projects with writes queued or running (0 when idle: nothing is kept per project). */
}
