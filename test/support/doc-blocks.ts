// Running the shell examples of our docs as tests: finding their blocks, and the tools they need.
import { spawnSync } from 'node:child_process'

/**
 * Whether bash and curl are installed. Under CI=true their absence is an error; elsewhere the
 * test named `what` says loudly that it skips.
 */
export function shellToolsFor (what: string): boolean {
  const present = ['bash', 'curl'].every(tool => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0)
  if (!present) {
    if (process.env.CI === 'true') throw new Error(`bash and curl are required on CI for ${what}`)
    console.warn(`\n*** SKIPPING ${what}: bash or curl is not installed ***\n`)
  }
  return present
}

/** The first fenced block of `language` at or after `from`: its text and where it ends. */
export function fencedBlock (markdown: string, from: number, language: string): { text: string, end: number } {
  const open = markdown.indexOf('```' + language + '\n', from)
  if (open === -1) throw new Error(`no \`\`\`${language} block after position ${from}`)
  const start = open + language.length + 4
  const close = markdown.indexOf('\n```', start - 1)
  return { text: markdown.slice(start, close + 1), end: close + 4 }
}
