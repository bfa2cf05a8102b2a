// The order an import takes records in (instance-records.ts), checked the same way by every
// store: users and keys first, then each project followed by its own records, its content
// among them. A store can then write a project's records as they come (MongoDB keeps the
// content in the project's document) without holding more than one project.
import { InstanceLineError, emptyCounts, type ImportCounts, type InstanceRecord, type ProjectLine } from './instance-records.js'

export class ImportOrder {
  readonly counts: ImportCounts = emptyCounts()
  private records = 0
  private project: ProjectLine | null = null
  private contentSeen = false
  /** The version of the project's last change line; null before its first. */
  private lastChange: number | null = null
  private lastCheckpoint = -1
  /** Usernames by user id: keys, projects and members must name users of the import. */
  private readonly users = new Map<string, string>()

  /** The line the last admitted record came from (line 1 is the header). */
  get line (): number {
    return this.records + 1
  }

  /** Checks that `record` may come now; throws InstanceLineError naming its line when not. */
  admit (record: InstanceRecord): void {
    this.records += 1
    const fail = (what: string): never => { throw new InstanceLineError(this.line, what) }
    switch (record.type) {
      case 'user':
      case 'apiKey':
        if (this.project) fail(`a ${record.type} after the first project (users and keys come first)`)
        if (record.type === 'user') this.users.set(record.id, record.username)
        else if (!this.users.has(record.userId)) fail(`key ${record.id} of user ${record.userId}, who is not among the users before it`)
        break
      case 'project':
        this.finishProject()
        // The name people use comes from the owner's user, so it must agree with it.
        if (this.users.get(record.ownerId) !== record.ownerName) fail(`project ${record.id}: its owner ${record.ownerId} is not the user @${record.ownerName} of the lines before it`)
        this.project = record
        this.contentSeen = false
        this.lastChange = null
        this.lastCheckpoint = -1
        break
      default: {
        if (!this.project || record.projectId !== this.project.id) fail(`${record.type} of project ${JSON.stringify(record.projectId)}, which is not the project of the lines before it`)
        // Schema, then content, then the rest: a store may write the project once it has both.
        if (record.type === 'schema' && this.contentSeen) fail('the project\'s schema after its content')
        if (record.type !== 'schema' && record.type !== 'content' && !this.contentSeen) fail(`a ${record.type} before the project's content`)
        if (record.type === 'member' && !this.users.has(record.userId)) fail(`member ${record.userId} is not among the users before it`)
        if (record.type === 'content') {
          if (this.contentSeen) fail('a second content of the project')
          if (record.version !== this.project?.version) fail(`content at version ${record.version}, the project is at ${this.project?.version}`)
          this.contentSeen = true
        }
        if (record.type === 'checkpoint') {
          if (record.version <= this.lastCheckpoint || record.version > (this.project?.version ?? 0)) fail(`checkpoint at version ${record.version} out of order`)
          this.lastCheckpoint = record.version
        }
        if (record.type === 'change') {
          // The log is contiguous up to the project's version, from at or below its floor + 1
          // (pruning keeps the entry at the floor; docs/design.md §9, content-log.ts).
          const floor = this.project?.historyFloor ?? 0
          const expected = this.lastChange === null ? `at most ${floor + 1}` : `${this.lastChange + 1}`
          const fits = this.lastChange === null ? record.entry.version <= floor + 1 : record.entry.version === this.lastChange + 1
          if (!fits || record.entry.version > (this.project?.version ?? 0)) fail(`change at version ${record.entry.version}, expected ${expected}`)
          this.lastChange = record.entry.version
        }
      }
    }
    this.counts[record.type] += 1
  }

  /** After the last record: the last project must be complete. */
  finish (): void {
    this.finishProject()
  }

  private finishProject (): void {
    const project = this.project
    if (!project) return
    if (!this.contentSeen) throw new InstanceLineError(this.line, `project ${project.id} has no content line`)
    const end = this.lastChange ?? project.historyFloor
    if (end !== project.version) throw new InstanceLineError(this.line, `project ${project.id}'s change log ends at version ${end}, the project is at ${project.version}`)
  }
}
