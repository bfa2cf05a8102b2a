// The CLI says on stderr which store it opened (server/cli/main.ts), before anything else.
// Tests of what a command itself prints take that line off with withoutStoreLine, which
// fails when it names another store than the test's.

export const storeLine = (dataDir: string): string => `contentd: data in ${dataDir} (sqlite)\n`

export function withoutStoreLine (stderr: string, dataDir: string): string {
  if (stderr.startsWith(storeLine(dataDir))) return stderr.slice(storeLine(dataDir).length)
  if (stderr.startsWith('contentd: data in ')) throw new Error(`the CLI opened another store than ${dataDir}: ${stderr.split('\n')[0]}`)
  return stderr
}
