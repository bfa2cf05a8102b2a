// If-Match conditions on the project version. ETags are the version in quotes ("7"); weak
// tags (W/"7") compare equal because the version identifies the content exactly.
import type { VersionCondition } from './types.js'

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

export function etagFor (version: number): string {
  return `"${version}"`
}
