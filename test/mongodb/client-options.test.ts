// The MongoDB client's settings (issue 28, A7): majority write and read concern pinned even
// when MONGODB_URI asks for less, and time limits set. Read from the real driver's parsed
// options (no server is contacted: the client connects only in init()).
import { describe, expect, it } from 'vitest'
import type { Db, MongoClient } from 'mongodb'
import { MongoStore } from '../../server/store/mongodb/mongo-store.js'

function open (uri: string): { client: MongoClient, db: Db } {
  const store = new MongoStore({ uri, contentLimitBytes: 1024 * 1024, historyLimit: 100, operationTimeoutMS: 7000 })
  return store as unknown as { client: MongoClient, db: Db }
}
const clientOf = (uri: string): MongoClient => open(uri).client

describe('MongoDB client settings', () => {
  it('pins majority write and read concern over what the URI says', () => {
    const { db } = open('mongodb://127.0.0.1:1/app?replicaSet=rs0&w=1&readConcernLevel=local&readPreference=secondaryPreferred')
    // Every collection the store uses comes from this database and inherits these.
    expect(db.writeConcern?.w).toBe('majority')
    expect(db.readConcern?.level).toBe('majority')
    expect(db.readPreference.mode).toBe('primary')
    expect(db.collection('projects').readConcern?.level).toBe('majority')
    expect(db.collection('projects').writeConcern?.w).toBe('majority')
  })

  it('has client-side time limits: the write concern\'s wtimeout, the socket, the pool queue', () => {
    const client = clientOf('mongodb://127.0.0.1:1/app?replicaSet=rs0&socketTimeoutMS=0')
    expect(client.options.writeConcern?.wtimeoutMS).toBe(7000)
    expect(client.options.socketTimeoutMS).toBe(14000)
    expect(client.options.waitQueueTimeoutMS).toBe(7000)
    expect(client.options.retryWrites).toBe(true)
  })
})
