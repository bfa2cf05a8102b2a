// If-Match and If-None-Match conditions on the project version. ETags are the version in quotes ("7"); weak
// tags (W/"7") compare equal because the version identifies the content exactly.
import type { ApplyOptions, VersionCondition } from './types.js'

/** Parses an If-Match / If-None-Match header; tags that are not versions never match. */
export function parseVersionCondition (header: string): VersionCondition {
  const versions: number[] = []
  for (const raw of header.split(',')) {
    const tag = raw.trim()
    if (tag === '*') return '*'
    const match = /^(?:W\/)?"(0|[1-9][0-9]{0,14})"$/.exec(tag)
    if (match) versions.push(Number(match[1]))
  }
  return versions
}

export function versionMatches (condition: VersionCondition, version: number): boolean {
  return condition === '*' || condition.includes(version)
}

/**
 * A write's preconditions on the version it would change (RFC 9110 §13.2.2, docs/design.md
 * §13b): If-Match must match, then If-None-Match must not (`*` always matches: the content
 * of a project always exists).
 */
export function preconditionsHold (options: Pick<ApplyOptions, 'ifMatch' | 'ifNoneMatch'>, version: number): boolean {
  if (options.ifMatch !== undefined && !versionMatches(options.ifMatch, version)) return false
  return options.ifNoneMatch === undefined || !versionMatches(options.ifNoneMatch, version)
}

export function etagFor (version: number): string {
  return `"${version}"`
}
