// Who may do what to a project (docs/design.md §5, §12). Pure: the HTTP layer and the realtime
// layer load the facts, this decides. A key's rights are the user's rights intersected with
// the key's permission and project scope, and, for a narrowed key, its paths and operations.
import { ContentdError, OperationError, type ErrorCode } from '../../shared/errors.js'
import type { NarrowableOperation } from '../../shared/key-scope.js'
import type { Operation } from '../../shared/operations.js'
import { isAtOrBelow } from '../../shared/path.js'
import type { ApiKeyRecord, ProjectRole, StoreOperation } from '../store/types.js'

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

/**
 * What a request does with a project's content, as far as a narrowed key is concerned
 * (docs/design.md §12): a path operation at a path, a read at a path (`GET ?path=`, or a
 * batch's `test`), or anything on the whole content (update, patch, revert; GET without a
 * path, `?version=`, changes, events, a Socket.IO subscription).
 */
export type ContentAccess =
  | { kind: 'write', op: NarrowableOperation, path: readonly string[] }
  | { kind: 'read', path: readonly string[] }
  | { kind: 'whole' }

/** The access an operation needs: update is whole-content, the others write at their path. */
export function operationAccess (operation: Operation): ContentAccess {
  return operation.op === 'update' ? { kind: 'whole' } : { kind: 'write', op: operation.op, path: operation.path }
}

/**
 * Throws KEY_SCOPE_DENIED unless the credential may commit `operation` (docs/design.md §12).
 * Update, revert and JSON Patch write the whole content; a batch needs every one of its
 * operations allowed, a `test` counting as a read at its path. A batch's refusal names the
 * first refused operation (`operation: i`, as its other failures do, §10).
 */
export function requireOperationScope (key: ApiKeyRecord | null, operation: StoreOperation): void {
  if (key === null || !isNarrowed(key)) return
  switch (operation.op) {
    case 'revert':
    case 'patch':
      requireKeyScope(key, { kind: 'whole' })
      return
    case 'batch':
      operation.operations.forEach((step, i) => {
        const access: ContentAccess = step.op === 'test' ? { kind: 'read', path: step.path } : { kind: 'write', op: step.op, path: step.path }
        try {
          requireKeyScope(key, access)
        } catch (error) {
          throw error instanceof ContentdError ? new OperationError(error, i) : error
        }
      })
      return
    default:
      requireKeyScope(key, operationAccess(operation))
  }
}

/** True when a key is narrowed to some paths or operations. */
export function isNarrowed (key: ApiKeyRecord | null): boolean {
  return key !== null && (key.paths !== null || key.ops !== null)
}

/**
 * null when the credential may do this; otherwise KEY_SCOPE_DENIED. Sessions and keys that
 * are not narrowed may do anything their role and permission allow (accessDenial). A
 * narrowed key reaches only at or below one of its paths, with its operations only, and
 * never the whole content. Every route and the realtime layer ask this, once per operation.
 */
export function keyScopeDenial (key: ApiKeyRecord | null, access: ContentAccess): 'KEY_SCOPE_DENIED' | null {
  if (key === null || !isNarrowed(key)) return null
  if (access.kind === 'whole') return 'KEY_SCOPE_DENIED'
  if (access.kind === 'write' && key.ops !== null && !key.ops.includes(access.op)) return 'KEY_SCOPE_DENIED'
  if (key.paths !== null && !key.paths.some(scope => isAtOrBelow(access.path, scope))) return 'KEY_SCOPE_DENIED'
  return null
}

/** Throws KEY_SCOPE_DENIED (403) unless the credential may do this (keyScopeDenial). */
export function requireKeyScope (key: ApiKeyRecord | null, access: ContentAccess): void {
  const denial = keyScopeDenial(key, access)
  if (denial) throw new ContentdError(denial, describeDenial(key as ApiKeyRecord, access))
}

/** Says which half of the narrowing refused, so the caller can tell a wrong path from a wrong op. */
function describeDenial (key: ApiKeyRecord, access: ContentAccess): string {
  if (access.kind === 'whole') return 'a narrowed key cannot read or write the whole content'
  if (access.kind === 'write' && key.ops !== null && !key.ops.includes(access.op)) return `the key may only ${key.ops.join(', ')}`
  return `"${access.path.join('.')}" is not at or below ${(key.paths ?? []).map(p => `"${p}"`).join(', ')}`
}
