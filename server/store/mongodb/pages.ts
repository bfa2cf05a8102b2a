// The aggregation pipelines that read one page of a list (docs/design.md §13). Each list is
// ONE round trip that returns at most a page: whatever MongoDB has to look at to find it
// (memberships, keys' scoped projects) is looked at in the database, never on this node's
// event loop. Ordering is by plain code-unit comparison, like SQLite's BINARY collation.
import type { Document } from 'mongodb'
import type { KeyPosition, PageRequest, ProjectPosition } from '../types.js'

/** Keys strictly after `after` in (createdAt, _id) order. */
export function keysPagePipeline (userId: string, page: PageRequest<KeyPosition>): Document[] {
  const after = page.after
  return [
    {
      $match: {
        userId,
        ...(after ? { $or: [{ createdAt: { $gt: after.createdAt } }, { createdAt: after.createdAt, _id: { $gt: after.id } }] } : {})
      }
    },
    { $sort: { createdAt: 1, _id: 1 } },
    { $limit: page.limit },
    // The names of the scoped projects, in one go (index on projects._id); the key's own
    // order is restored by the caller, since $lookup does not keep it.
    { $lookup: { from: 'projects', localField: 'projectIds', foreignField: '_id', pipeline: [{ $project: { ownerName: 1, slug: 1 } }], as: 'scopedProjects' } }
  ]
}

/** Documents whose (ownerName, slug) comes strictly after the position. */
function projectsAfter (after: ProjectPosition | null): Document {
  return after ? { $or: [{ ownerName: { $gt: after.ownerName } }, { ownerName: after.ownerName, slug: { $gt: after.slug } }] } : {}
}

/**
 * Projects the user owns (index ownerId, slug) united with those they are a member of, each
 * side cut to a page before the union; with `scope`, only those project ids.
 */
export function projectsPagePipeline (userId: string, page: PageRequest<ProjectPosition>, scope: string[] | null): Document[] {
  const order = { $sort: { ownerName: 1, slug: 1 } }
  const limit = { $limit: page.limit }
  return [
    { $match: { ownerId: userId, ...(scope ? { _id: { $in: scope } } : {}), ...projectsAfter(page.after) } },
    // One owner: slug order is (ownerName, slug) order, and the (ownerId, slug) index gives it.
    { $sort: { slug: 1 } },
    limit,
    { $project: { content: 0 } },
    { $addFields: { role: 'owner' } },
    {
      $unionWith: {
        coll: 'members',
        pipeline: [
          { $match: { userId, ...(scope ? { projectId: { $in: scope } } : {}) } },
          { $lookup: { from: 'projects', localField: 'projectId', foreignField: '_id', pipeline: [{ $project: { content: 0 } }], as: 'project' } },
          { $unwind: '$project' },
          { $replaceWith: { $mergeObjects: ['$project', { role: '$role' }] } },
          { $match: projectsAfter(page.after) },
          order,
          limit
        ]
      }
    },
    order,
    limit
  ]
}

/** A project's members by username, strictly after `after`. */
export function membersPagePipeline (projectId: string, page: PageRequest<string>): Document[] {
  return [
    { $match: { projectId } },
    { $lookup: { from: 'users', localField: 'userId', foreignField: '_id', pipeline: [{ $project: { username: 1 } }], as: 'user' } },
    { $unwind: '$user' },
    ...(page.after !== null ? [{ $match: { 'user.username': { $gt: page.after } } }] : []),
    { $sort: { 'user.username': 1 } },
    { $limit: page.limit },
    { $project: { _id: 0, userId: 1, role: 1, username: '$user.username' } }
  ]
}
