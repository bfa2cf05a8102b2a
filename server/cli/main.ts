#!/usr/bin/env node
// The admin CLI, `contentd` (package bin). It acts directly on the store that the
// environment configures (server/config.ts), with the same services as the HTTP API.
// Errors end with one line on stderr and a non-zero exit, never a stack trace:
// 2 for a wrong command or argument (with its usage line), 1 for a refused action.
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { ContentdError } from '../../shared/errors.js'
import { ConfigError, loadConfig, type Config } from '../config.js'
import { dataLocation } from '../startup-line.js'
import { sqliteFile } from '../store/sqlite/file.js'
import type { Store } from '../store/types.js'
import type { Admin } from './admin.js'
import { commandHelp, COMMAND_USAGE, MAIN_USAGE, UsageError } from './usage.js'

type Options = NonNullable<ParseArgsConfig['options']>

interface Command {
  positionals: number
  /** Arguments that may be left out after the required ones. */
  optionalPositionals?: number
  options?: Options
  run (admin: Admin, args: string[], values: Record<string, unknown>): Promise<string>
  /** Instead of run: a command on the store's file itself, without opening the Store (backup, restore). */
  onFile? (config: Config, args: string[], values: Record<string, unknown>): Promise<string>
  /** Instead of run: a command on the opened Store itself (export --all, import --all). */
  onStore? (store: Store, config: Config, args: string[], values: Record<string, unknown>): Promise<string>
}

const noStore = async (): Promise<string> => { throw new Error('this command does not open the store') }

const str = (v: unknown) => typeof v === 'string' ? v : undefined

const COMMANDS: Record<string, Command> = {
  'user create': {
    positionals: 1,
    options: { password: { type: 'string' } },
    run: async (admin, [name], values) => admin.createUser(name as string, str(values.password) ?? await passwordFromStdin())
  },
  'user list': { positionals: 0, run: admin => admin.listUsers() },
  'project create': {
    positionals: 1,
    options: { name: { type: 'string' } },
    run: (admin, [ref], values) => admin.createProject(ref as string, str(values.name))
  },
  'key create': {
    positionals: 1,
    options: {
      name: { type: 'string' },
      permission: { type: 'string' },
      project: { type: 'string', multiple: true },
      path: { type: 'string', multiple: true },
      op: { type: 'string', multiple: true },
      expires: { type: 'string' }
    },
    run: (admin, [user], values) => {
      const name = str(values.name)
      const permission = str(values.permission)
      if (name === undefined) throw new UsageError('--name is required', 'key create')
      if (permission !== 'read' && permission !== 'write') throw new UsageError('--permission must be read or write', 'key create')
      return admin.createKey(user as string, {
        name,
        permission,
        projects: (values.project as string[] | undefined) ?? [],
        paths: (values.path as string[] | undefined) ?? [],
        ops: (values.op as string[] | undefined) ?? [],
        expires: str(values.expires)
      })
    }
  },
  'key list': { positionals: 1, run: (admin, [user]) => admin.listKeys(user as string) },
  'key revoke': { positionals: 1, run: (admin, [id]) => admin.revokeKey(id as string) },
  'schema set': {
    positionals: 1,
    optionalPositionals: 1,
    run: async (admin, [ref, file]) => admin.setSchema(ref as string, file === undefined ? await readStdin() : await readFile(file, 'utf8'), file ?? 'stdin')
  },
  'schema get': { positionals: 1, run: (admin, [ref]) => admin.getSchema(ref as string) },
  'schema rm': { positionals: 1, run: (admin, [ref]) => admin.removeSchema(ref as string) },
  export: {
    positionals: 0,
    optionalPositionals: 1,
    options: { all: { type: 'boolean' } },
    run: noStore,
    onStore: async (store, config, [ref], values) => {
      if (projectOrAll('export', ref, values) === 'all') {
        const records = await (await import('./instance-admin.js')).exportAll(store, process.stdout)
        process.stderr.write(`contentd: exported ${records} records\n`)
        return ''
      }
      return new (await import('./admin.js')).Admin(store, config).exportContent(ref as string)
    }
  },
  import: {
    positionals: 0,
    optionalPositionals: 1,
    options: { all: { type: 'boolean' } },
    run: noStore,
    onStore: async (store, config, [ref], values) => {
      if (projectOrAll('import', ref, values) === 'all') {
        if (process.stdin.isTTY) throw new UsageError('expected an export on stdin (contentd import --all < dump.jsonl)', 'import')
        const instance = await import('./instance-admin.js')
        return `Imported ${instance.describeCounts(await instance.importAll(store, process.stdin))}`
      }
      return new (await import('./admin.js')).Admin(store, config).importContent(ref as string, await readStdin())
    }
  },
  'webhook add': {
    positionals: 2,
    options: { path: { type: 'string', multiple: true }, op: { type: 'string', multiple: true }, description: { type: 'string' } },
    run: (admin, [ref, url], values) => admin.webhooks.add(ref as string, url as string, {
      paths: (values.path as string[] | undefined) ?? [], ops: (values.op as string[] | undefined) ?? [], description: str(values.description)
    })
  },
  'webhook list': { positionals: 1, run: (admin, [ref]) => admin.webhooks.list(ref as string) },
  'webhook rm': { positionals: 1, run: (admin, [id]) => admin.webhooks.remove(id as string) },
  'webhook deliveries': { positionals: 1, run: (admin, [id]) => admin.webhooks.deliveries(id as string) },
  patch: { positionals: 2, run: async (admin, [ref, file]) => admin.patchContent(ref as string, file === '-' ? await readStdin() : await readPatchFile(file as string)) },
  backup: {
    positionals: 0,
    options: { out: { type: 'string' } },
    run: noStore,
    onFile: async (config, _args, values) => (await import('./backup-admin.js')).backupCommand(config, str(values.out))
  },
  restore: {
    positionals: 1,
    options: { force: { type: 'boolean' } },
    run: noStore,
    onFile: async (config, [file], values) => (await import('./backup-admin.js')).restoreCommand(config, file as string, values.force === true)
  },
  log: {
    positionals: 1,
    options: { since: { type: 'string' }, follow: { type: 'boolean' }, json: { type: 'boolean' }, path: { type: 'string' } },
    run: (admin, [ref], values) => {
      const sinceText = str(values.since) ?? '0'
      if (!/^(?:0|[1-9][0-9]{0,14})$/.test(sinceText)) throw new UsageError(`--since must be a version, a whole number such as 0 or 42 (got ${JSON.stringify(sinceText.slice(0, 40))})`, 'log')
      const stopped = new Promise<void>(resolve => { process.once('SIGINT', resolve); process.once('SIGTERM', resolve) })
      return admin.log(ref as string, {
        since: Number(sinceText),
        path: str(values.path),
        follow: values.follow === true,
        json: values.json === true,
        print: line => { process.stdout.write(line + '\n') },
        stopped
      })
    }
  }
}

/** export and import name one project, or --all for the whole instance. */
function projectOrAll (command: string, ref: string | undefined, values: Record<string, unknown>): 'all' | 'project' {
  const all = values.all === true
  if (all && ref !== undefined) throw new UsageError('--all takes no project', command)
  if (!all && ref === undefined) throw new UsageError('expected @name/slug, or --all for the whole instance', command)
  return all ? 'all' : 'project'
}

async function readPatchFile (file: string): Promise<string> {
  const { readFile } = await import('node:fs/promises')
  try {
    return await readFile(file, 'utf8')
  } catch (e) {
    throw new UsageError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`, 'patch')
  }
}

async function readStdin (): Promise<string> {
  if (process.stdin.isTTY) throw new UsageError('expected input on stdin (e.g. contentd import @alice/demo < file.json)')
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

/** The first line of stdin, without its line ending (`echo secret | contentd user create @a`). */
async function passwordFromStdin (): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('Password (input is not hidden; prefer piping it in): ')
  const text = await readStdin().catch(async (e: unknown) => {
    if (!process.stdin.isTTY) throw e
    const chunks: Buffer[] = []
    for await (const chunk of process.stdin) { chunks.push(chunk as Buffer); if (chunk.includes(10)) break }
    return Buffer.concat(chunks).toString('utf8')
  })
  return text.split(/\r?\n/)[0] ?? ''
}

/** A refusal that is not a catalogue error: one line on stderr, exit 1. */
class CliError extends Error {}

/**
 * Opens the configured store, saying on stderr which one (stdout stays the command's output).
 * A new embedded store is made only with --init: run in the wrong folder, the CLI would
 * otherwise create ./data there, and a user made in it is unknown to the running server.
 * MongoDB is named explicitly by MONGODB_URI, so it is opened as configured.
 */
async function withStore<T> (init: boolean, work: (store: Store, config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig()
  if (config.store === 'sqlite' && !init && !existsSync(sqliteFile(config.dataDir))) {
    throw new CliError(`no store in ${dataLocation(config)}; set DATA_DIR to the server's data directory, or add --init to create a new store there`)
  }
  process.stderr.write(`contentd: data in ${dataLocation(config)}\n`)
  const { createStore } = await import('../store/index.js')
  const store = await createStore(config)
  try {
    await store.init()
    return await work(store, config)
  } finally {
    await store.close()
  }
}

async function main (argv: string[]): Promise<number> {
  if (argv.length === 0) throw new UsageError('missing command')
  if (argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') { process.stdout.write(MAIN_USAGE + '\n'); return 0 }
  if (argv[0] === 'serve') {
    if (argv.includes('--help') || argv.includes('-h')) { process.stdout.write(commandHelp('serve') + '\n'); return 0 }
    if (argv.length > 1) throw new UsageError('serve takes no arguments (configure it with environment variables)', 'serve')
    // The server module starts itself on import, exactly as `node dist/server/index.js`.
    await import('../index.js')
    return -1
  }
  const two = `${argv[0]} ${argv[1] ?? ''}`.trim()
  const name = COMMANDS[two] ? two : COMMANDS[argv[0] as string] ? argv[0] : undefined
  if (!name) {
    const group = Object.keys(COMMAND_USAGE).filter(c => c.startsWith(`${argv[0]} `))
    if (group.length > 0) {
      if (argv[1] === '--help' || argv[1] === '-h') { process.stdout.write(group.map(c => commandHelp(c)).join('\n\n') + '\n'); return 0 }
      throw new UsageError(`unknown command "${two}"; one of: ${group.join(', ')}`)
    }
    throw new UsageError(`unknown command "${argv[0]}"`)
  }
  const command = COMMANDS[name] as Command
  const afterName = argv.slice(name.split(' ').length)
  const init = afterName.includes('--init')
  const rest = afterName.filter(arg => arg !== '--init')
  if (rest.includes('--help') || rest.includes('-h')) { process.stdout.write(commandHelp(name) + '\n'); return 0 }
  let parsed: ReturnType<typeof parseArgs>
  try {
    parsed = parseArgs({ args: rest, options: command.options ?? {}, allowPositionals: true, strict: true })
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message.split('\n')[0] as string : String(e), name)
  }
  const most = command.positionals + (command.optionalPositionals ?? 0)
  if (parsed.positionals.length < command.positionals || parsed.positionals.length > most) {
    const expected = most === command.positionals ? `${most}` : `${command.positionals} to ${most}`
    throw new UsageError(`expected ${expected} argument${most === 1 ? '' : 's'}, got ${parsed.positionals.length}`, name)
  }
  // Loaded only to act: help and usage errors need no native module (argon2, SQLite).
  const onStore = command.onStore
  const output = command.onFile
    ? await command.onFile(loadConfig(), parsed.positionals, parsed.values)
    : onStore
      ? await withStore(init, (store, config) => onStore(store, config, parsed.positionals, parsed.values))
      : await withStore(init, async (store, config) => command.run(new (await import('./admin.js')).Admin(store, config), parsed.positionals, parsed.values))
  // '' when the command printed as it went (log).
  if (output !== '') process.stdout.write(output.endsWith('\n') ? output : output + '\n')
  return 0
}

// `contentd log … | head`: the reader went away; stop quietly instead of crashing on EPIPE.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0)
  throw e
})

main(process.argv.slice(2)).then(code => {
  if (code >= 0) process.exitCode = code
}, (e: unknown) => {
  if (e instanceof UsageError) {
    process.stderr.write(`contentd: ${e.message}\nusage: ${e.command ? COMMAND_USAGE[e.command] : 'contentd <command> [arguments] (contentd --help lists them)'}\n`)
    process.exitCode = 2
  } else if (e instanceof ContentdError) {
    process.stderr.write(`contentd: ${e.message} (${e.code})\n`)
    process.exitCode = 1
  } else if (e instanceof ConfigError || e instanceof CliError) {
    process.stderr.write(`contentd: ${e.message}\n`)
    process.exitCode = 1
  } else {
    process.stderr.write(`contentd: ${e instanceof Error ? e.message : String(e)}\n`)
    process.exitCode = 1
  }
})
