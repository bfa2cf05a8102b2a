// Who may do what to a project (docs/design.md §5). Pure: the HTTP layer and the realtime layer
// load the facts, this decides. A key's rights are the user's rights intersected with the
// key's permission and project scope.
import type { ErrorCode } from '../../shared/errors.js'
import type { ApiKeyRecord, ProjectRole } from '../store/types.js'

export type Access = 'read' | 'write'

const ROLE_GRANTS: Record<ProjectRole, readonly Access[]> = {
  owner: ['read', 'write'],
  editor: ['read', 'write'],
  viewer: ['read']
}

/** null when allowed; otherwise the 403 code to answer with. */
export function accessDenial (role: ProjectRole | null, key: ApiKeyRecord | null, projectId: string, needed: Access): ErrorCode | null {
  if (role === null || !ROLE_GRANTS[role].includes(needed)) return 'FORBIDDEN'
  if (key) {
    if (key.projectIds !== null && !key.projectIds.includes(projectId)) return 'KEY_PERMISSION_DENIED'
    if (needed === 'write' && key.permission !== 'write') return 'KEY_PERMISSION_DENIED'
  }
  return null
}
