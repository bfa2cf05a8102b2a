// The documentation holds together: every relative link in the Markdown files points to a
// file inside the repository, and to a heading that exists when it names one; the README
// stays a front door (at most 250 lines) and points nowhere outside the repository.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { PROJECT_ROOT } from '../support/server-process.js'

const DOCUMENTS = [
  'README.md', 'CONTRIBUTING.md', 'SECURITY.md', 'BENCHMARKS.md',
  ...readdirSync(join(PROJECT_ROOT, 'docs')).filter(name => name.endsWith('.md')).map(name => `docs/${name}`)
]

const read = (file: string) => readFileSync(join(PROJECT_ROOT, file), 'utf8')

/** Fenced code blocks removed (also those indented inside list items). */
function withoutCodeBlocks (markdown: string): string {
  return markdown.replace(/^[ \t]*(```|~~~)[^\n]*\n[\s\S]*?^[ \t]*\1[ \t]*$/gm, '')
}

/** The Markdown outside fenced code blocks and inline code, where links are links. */
function prose (markdown: string): string {
  return withoutCodeBlocks(markdown).replace(/`[^`\n]*`/g, '')
}

/** Inline links and images: [text](target) and ![alt](target), with an optional "title". */
function linkTargets (markdown: string): string[] {
  return [...prose(markdown).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map(match => match[1] as string)
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to "-", repeats numbered. */
function anchorsOf (markdown: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  for (const [, heading] of withoutCodeBlocks(markdown).matchAll(/^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$/gm)) {
    const text = (heading as string).replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    const base = text.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    anchors.add(count === 0 ? base : `${base}-${count}`)
  }
  return anchors
}

const EXTERNAL = /^(https?:|mailto:)/i

function problemsOf (file: string): string[] {
  const problems: string[] = []
  for (const target of linkTargets(read(file))) {
    if (EXTERNAL.test(target)) continue
    const [rawPath = '', anchor] = target.split('#', 2)
    const path = decodeURIComponent(rawPath)
    const absolute = path === '' ? join(PROJECT_ROOT, file) : resolve(PROJECT_ROOT, dirname(file), path)
    const inside = relative(PROJECT_ROOT, absolute)
    if (inside.startsWith('..')) { problems.push(`${target}: outside the repository`); continue }
    if (!existsSync(absolute)) { problems.push(`${target}: no such file`); continue }
    if (anchor !== undefined && anchor !== '') {
      if (!statSync(absolute).isFile() || !absolute.endsWith('.md')) { problems.push(`${target}: an anchor into a file that is not Markdown`); continue }
      if (!anchorsOf(readFileSync(absolute, 'utf8')).has(anchor)) problems.push(`${target}: no heading with the anchor #${anchor}`)
    }
  }
  return problems
}

describe('documentation links', () => {
  it.each(DOCUMENTS)('%s links only to files and headings inside the repository', file => {
    expect(problemsOf(file)).toEqual([])
  })

  it('finds the links it checks (the docs do link to each other)', () => {
    const readmeTargets = linkTargets(read('README.md'))
    expect(readmeTargets).toContain('docs/api.md')
    expect(readmeTargets).toContain('docs/images/dashboard.png')
    expect(anchorsOf(read('docs/design.md'))).toContain('4-order-of-checks-and-errors')
  })

  it('the README is at most 250 lines', () => {
    expect(read('README.md').split('\n').length).toBeLessThanOrEqual(250)
  })

  it('the README points nowhere outside the repository', () => {
    const readme = read('README.md')
    expect(readme).not.toContain('../')
    expect(readme).not.toMatch(/\bDESIGN\.md\b/)
  })
})
