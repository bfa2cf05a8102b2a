// Projects and their members.
import { z } from 'zod'
import { displayName, isoTime, nextCursor } from './common.js'

export const projectRole = z.enum(['owner', 'editor', 'viewer'])
export const memberRole = z.enum(['viewer', 'editor'])
export type ProjectRole = z.infer<typeof projectRole>
export type MemberRole = z.infer<typeof memberRole>

export const project = z.object({
  username: displayName,
  slug: z.string(),
  name: z.string(),
  createdAt: isoTime,
  version: z.number().int().min(0),
  role: projectRole.optional().meta({ description: "The caller's role; absent only where the server has no caller" }),
  hasSchema: z.boolean().optional().meta({ description: 'Only when reading one project: whether it has a schema (GET …/schema answers it, owner only); lists leave it out' }),
  hasRules: z.boolean().optional().meta({ description: 'Only when its owner reads one project: whether it has rules for app users (GET …/rules answers them); lists leave it out' }),
  hasAppAuth: z.boolean().optional().meta({ description: 'Only when its owner reads one project: whether it trusts an app sign-in (GET …/auth answers it); lists leave it out' })
})
export type ProjectView = z.infer<typeof project>

export const member = z.object({ username: displayName, role: memberRole })
export type MemberView = z.infer<typeof member>

export const PROJECT_RESPONSES = {
  Project: project,
  ProjectList: z.object({ projects: z.array(project), nextCursor }),
  Member: member,
  MemberList: z.object({ members: z.array(member), nextCursor })
}
