// The MongoDB side of batches and patches (server/store/mongodb/computed-write.ts) and of
// Idempotency-Key records (idempotency.ts), the parts that need no server: the write-back is
// ONE update guarded by a compare-and-set on the version read, and computed writes of a
// project run one at a time on a node. The store contract suite runs the rest against a real
// MongoDB when MONGODB_URI is set.
import { describe, expect, it } from 'vitest'
import { computedWrite, SerialPerProject } from '../../server/store/mongodb/computed-write.js'
import { withTailBookkeeping } from '../../server/store/mongodb/history.js'
import { idempotencyDocId } from '../../server/store/mongodb/idempotency.js'

describe('computedWrite', () => {
  it('is one update of the content and the version, matching only the version read', () => {
    const write = computedWrite('p1', { a: [1, 2] }, 7, 1000)
    expect(write.filter).toEqual({ _id: 'p1', version: 7 })
    expect(write.update).toEqual({ $set: { content: { a: [1, 2] } }, $inc: { version: 1 } })
    // As the store sends it: the log's tail bookkeeping counts the entry (no checkpoint: the entry holds operations, not content).
    expect(withTailBookkeeping(write.update, false, 50)).toEqual({ $set: { content: { a: [1, 2] } }, $inc: { version: 1, tailCount: 1, tailBytes: 50 } })
    expect(write.options).toEqual(expect.objectContaining({ returnDocument: 'after' }))
  })
})

describe('SerialPerProject', () => {
  it('runs one project\'s tasks one at a time, in order, other projects alongside, failures included', async () => {
    const serial = new SerialPerProject()
    const log: string[] = []
    const task = (name: string, ms: number, fail = false) => async () => {
      log.push(`start ${name}`)
      await new Promise(resolve => setTimeout(resolve, ms))
      log.push(`end ${name}`)
      if (fail) throw new Error(name)
      return name
    }
    const results = await Promise.allSettled([serial.run('a', task('a1', 20, true)), serial.run('a', task('a2', 1)), serial.run('b', task('b1', 5))])
    expect(results.map(r => r.status)).toEqual(['rejected', 'fulfilled', 'fulfilled'])
    expect(log.indexOf('start a2')).toBeGreaterThan(log.indexOf('end a1'))
    expect(log.indexOf('end b1')).toBeLessThan(log.indexOf('end a1'))
  })
})

describe('idempotencyDocId', () => {
  it('keeps project, caller and key apart whatever the key holds', () => {
    expect(idempotencyDocId({ projectId: 'p', caller: 'user:u', key: 'a","b' })).not.toBe(idempotencyDocId({ projectId: 'p', caller: 'user:u","a', key: 'b' }))
  })
})
