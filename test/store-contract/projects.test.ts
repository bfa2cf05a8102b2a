// The store contract, projects (ProjectStorage, server/store/types.ts): projects and members.
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { ContentdError } from '../../shared/errors.js'
import type { ProjectRecord, ProjectRole, Store, UserRecord } from '../../server/store/types.js'
import { storeFactories } from '../support/stores.js'
import { byId, contractStore, expectCode, FIRST, inc, set, unique, userRecord } from './contract.js'

describe.each(storeFactories)('store contract, projects: $name', (factory) => {
  let store: Store
  const { apply, newUser, newProject, allProjects, allMembers } = contractStore(factory, opened => { store = opened })

  describe('projects', () => {
    it('creates a project at version 0 with content {} and finds it by owner and slug', async () => {
      const owner = await newUser()
      const input = { id: randomUUID(), ownerId: owner.id, ownerName: owner.username, slug: unique('p'), name: 'Demo', createdAt: new Date().toISOString() }
      const created = await store.createProject(input)
      expect(created).toEqual({ ...input, version: 0 })
      expect(await store.findProject(owner.username, input.slug)).toEqual(created)
      expect(await store.readContent(created.id)).toMatchObject({ version: 0, content: {} })
      expect(await store.findProject(owner.username, unique('missing'))).toBeNull()
      expect(await store.findProject(unique('nobody'), input.slug)).toBeNull()
    })

    it('refuses a second project with the same slug for the same owner, but two owners may share a slug', async () => {
      const alice = await newUser()
      const bob = await newUser()
      const first = await newProject(alice)
      const again = { id: randomUUID(), ownerId: alice.id, ownerName: alice.username, slug: first.slug, name: 'Other', createdAt: new Date().toISOString() }
      await expectCode(store.createProject(again), 'PROJECT_EXISTS', 'same owner, same slug')
      expect(await store.findProject(alice.username, first.slug)).toEqual(first)
      const bobs = await store.createProject({ ...again, id: randomUUID(), ownerId: bob.id, ownerName: bob.username })
      expect(await store.findProject(bob.username, first.slug)).toEqual(bobs)
      expect(await store.findProject(alice.username, first.slug)).toEqual(first)
    })

    it('finds projects by ids in the order asked for, skipping unknown ones, with their current versions', async () => {
      const a = await newProject()
      const b = await newProject()
      await apply(b, inc('n'))
      expect(await store.findProjectsByIds([b.id, randomUUID(), a.id])).toEqual([{ ...b, version: 1 }, a])
      expect(await store.findProjectsByIds([a.id, b.id])).toEqual([a, { ...b, version: 1 }])
      expect(await store.findProjectsByIds([])).toEqual([])
    })

    it('refuses a project past the quota with QUOTA_EXCEEDED; memberships do not count, a deleted project frees its place', async () => {
      const owner = await newUser()
      const other = await newUser()
      const shared = await newProject(other)
      await store.setMember(shared.id, owner.id, 'editor')
      const make = (slug: string) => store.createProject({ id: randomUUID(), ownerId: owner.id, ownerName: owner.username, slug, name: slug, createdAt: new Date().toISOString() }, 2)
      const first = await make('one')
      await make('two')
      await expectCode(make('three'), 'QUOTA_EXCEEDED', 'third project with a quota of 2')
      expect(await store.findProject(owner.username, 'three')).toBeNull()
      await store.deleteProject(first.id)
      await make('three')
      expect((await allProjects(owner.id)).map(p => p.slug).sort()).toEqual([shared.slug, 'three', 'two'].sort())
    })

    it('20 concurrent project creates against a quota of 5: exactly 5 succeed', async () => {
      const owner = await newUser()
      const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) =>
        store.createProject({ id: randomUUID(), ownerId: owner.id, ownerName: owner.username, slug: `race-${i}`, name: 'r', createdAt: new Date().toISOString() }, 5)))
      expect(outcomes.filter(o => o.status === 'fulfilled')).toHaveLength(5)
      for (const o of outcomes) if (o.status === 'rejected') expect((o.reason as ContentdError).code).toBe('QUOTA_EXCEEDED')
      expect(await allProjects(owner.id)).toHaveLength(5)
    })

    it('lists the projects a user owns or is a member of, with the role in each', async () => {
      const me = await newUser()
      const other = await newUser()
      const mine = await newProject(me)
      const viewed = await newProject(other)
      const edited = await newProject(other)
      const unrelated = await newProject(other)
      await store.setMember(viewed.id, me.id, 'viewer')
      await store.setMember(edited.id, me.id, 'editor')
      const projects = await allProjects(me.id)
      expect(byId(projects)).toEqual(byId([
        { ...mine, role: 'owner' },
        { ...viewed, role: 'viewer' },
        { ...edited, role: 'editor' }
      ]))
      expect(projects.map(p => p.id)).not.toContain(unrelated.id)
      expect(await allProjects((await newUser()).id)).toEqual([])
    })

    it('lists projects a page at a time by owner then slug, owned and shared interleaved, each once', async () => {
      // Names chosen so that owned and shared projects interleave in the order.
      const tag = unique('o').replace(/[^a-z0-9]/g, '')
      const names = ['a', 'm', 'z'].map(letter => `${letter}${tag}`)
      const users: UserRecord[] = []
      for (const username of names) { const user = userRecord(username); await store.createUser(user); users.push(user) }
      const [ann, me, zed] = users as [UserRecord, UserRecord, UserRecord]
      const make = (owner: UserRecord, slug: string) => store.createProject({ id: randomUUID(), ownerId: owner.id, ownerName: owner.username, slug, name: slug, createdAt: new Date().toISOString() })
      const expected: Array<ProjectRecord & { role: ProjectRole }> = []
      for (const slug of ['b', 'a-1', 'c']) expected.push({ ...(await make(me, slug)), role: 'owner' })
      for (const [owner, slug, role] of [[ann, 'x', 'viewer'], [ann, 'a', 'editor'], [zed, 'q', 'viewer'], [zed, 'b', 'editor']] as const) {
        const project = await make(owner, slug)
        await store.setMember(project.id, me.id, role)
        expected.push({ ...project, role })
      }
      await make(ann, 'not-mine')
      expected.sort((x, y) => (x.ownerName < y.ownerName ? -1 : x.ownerName > y.ownerName ? 1 : x.slug < y.slug ? -1 : x.slug > y.slug ? 1 : 0))
      for (const pageSize of [1, 2, 3, 7, 100]) {
        expect(await allProjects(me.id, null, pageSize), `pages of ${pageSize}`).toEqual(expected)
      }
      // With a key's scope: only those, and only while the user can still reach them.
      const scope = [expected[5]!.id, expected[0]!.id, expected[3]!.id, randomUUID()]
      const scoped = expected.filter(p => scope.includes(p.id))
      for (const pageSize of [1, 2, 100]) {
        expect(await allProjects(me.id, scope, pageSize), `scoped, pages of ${pageSize}`).toEqual(scoped)
      }
      await store.removeMember(expected[0]!.id, me.id)
      expect(await allProjects(me.id, scope)).toEqual(scoped.slice(1))
      expect(await store.listProjectsForUser(me.id, { after: null, limit: 3 }, null)).toHaveLength(3)
    })

    it('deleting a project removes it, its content and its members; the slug can be used again from scratch', async () => {
      const owner = await newUser()
      const member = await newUser()
      const project = await newProject(owner)
      await store.setMember(project.id, member.id, 'editor')
      await apply(project, set('secret', 'old data'))
      await store.deleteProject(project.id)
      expect(await store.findProject(owner.username, project.slug)).toBeNull()
      expect(await store.findProjectsByIds([project.id])).toEqual([])
      expect(await store.readContent(project.id)).toBeNull()
      expect(await store.findMemberRole(project.id, member.id)).toBeNull()
      expect(await store.listMembers(project.id, FIRST)).toEqual([])
      expect(await allProjects(member.id)).toEqual([])
      expect(await allProjects(owner.id)).toEqual([])
      const reborn = await store.createProject({ id: randomUUID(), ownerId: owner.id, ownerName: owner.username, slug: project.slug, name: 'Again', createdAt: new Date().toISOString() })
      expect(await store.readContent(reborn.id)).toMatchObject({ version: 0, content: {} })
      expect(await store.listMembers(reborn.id, FIRST)).toEqual([])
    })
  })


  describe('members', () => {
    it('sets, updates, finds, lists and removes members', async () => {
      const project = await newProject()
      const ann = await newUser()
      const ben = await newUser()
      await store.setMember(project.id, ann.id, 'viewer')
      expect(await store.findMemberRole(project.id, ann.id)).toBe('viewer')
      await store.setMember(project.id, ann.id, 'editor')
      expect(await store.findMemberRole(project.id, ann.id), 'role updated in place').toBe('editor')
      await store.setMember(project.id, ben.id, 'viewer')
      const members = await allMembers(project.id)
      expect([...members].sort((a, b) => a.userId.localeCompare(b.userId))).toEqual([
        { userId: ann.id, username: ann.username, role: 'editor' },
        { userId: ben.id, username: ben.username, role: 'viewer' }
      ].sort((a, b) => a.userId.localeCompare(b.userId)))
      expect(await store.removeMember(project.id, ann.id)).toBe(true)
      expect(await store.removeMember(project.id, ann.id), 'removing twice').toBe(false)
      expect(await store.findMemberRole(project.id, ann.id)).toBeNull()
      expect(await allMembers(project.id)).toEqual([{ userId: ben.id, username: ben.username, role: 'viewer' }])
      expect(await store.findMemberRole(project.id, (await newUser()).id)).toBeNull()
    })

    it('lists members a page at a time by username, each once', async () => {
      const project = await newProject()
      const users: UserRecord[] = []
      for (let i = 0; i < 7; i++) users.push(await newUser())
      for (const [i, user] of users.entries()) await store.setMember(project.id, user.id, i % 2 === 0 ? 'viewer' : 'editor')
      const expected = users.map((u, i) => ({ userId: u.id, username: u.username, role: i % 2 === 0 ? 'viewer' : 'editor' }))
        .sort((a, b) => (a.username < b.username ? -1 : 1))
      for (const pageSize of [1, 3, 100]) expect(await allMembers(project.id, pageSize), `pages of ${pageSize}`).toEqual(expected)
    })
  })

})
