// Help texts of the admin CLI. Every command answers --help; a wrong command or argument
// prints the relevant usage line to stderr and exits 2.

export const COMMAND_USAGE: Record<string, string> = {
  serve: 'contentd serve',
  'user create': 'contentd user create @name [--password P]   (without --password the password is read from stdin)',
  'user list': 'contentd user list',
  'project create': 'contentd project create @name/slug [--name "Display name"]',
  'key create': 'contentd key create @name --name N --permission read|write [--project @name/slug]... [--path a.b]... [--op increment]... [--expires 30d]',
  'key list': 'contentd key list @name',
  'key revoke': 'contentd key revoke ID',
  'schema set': 'contentd schema set @name/slug [schema.json]   (without a file the schema is read from stdin)',
  'schema get': 'contentd schema get @name/slug',
  'schema rm': 'contentd schema rm @name/slug',
  export: 'contentd export @name/slug > file.json  |  contentd export --all > dump.jsonl',
  import: 'contentd import @name/slug < file.json  |  contentd import --all [--init] < dump.jsonl',
  'webhook add': 'contentd webhook add @name/slug URL [--path P]... [--op OP]... [--description D]',
  'webhook list': 'contentd webhook list @name/slug',
  'webhook rm': 'contentd webhook rm ID',
  'webhook deliveries': 'contentd webhook deliveries ID',
  patch: 'contentd patch @name/slug file.json   (an RFC 6902 JSON Patch; - reads it from stdin)',
  log: 'contentd log @name/slug [--path a.b] [--since N] [--follow] [--json]',
  backup: 'contentd backup [--out FILE]',
  restore: 'contentd restore FILE [--force]'
}

export const COMMAND_HELP: Record<string, string> = {
  serve: 'Start the server (HTTP + Socket.IO), exactly like `npm start`.',
  'user create': 'Create a user (useful with SIGNUP=closed). The password is hashed like signup does.',
  'user list': 'List all users with their creation time.',
  'project create': 'Create a project owned by the user; its content starts as {}.',
  'key create': 'Create an API key for the user and print it once, last on its line. --project may repeat; without it the key reaches every project the user can access. --path and --op may repeat and narrow the key to those paths and operations (docs/schema.md). --expires takes 30d, 12h, 90m or 45s.',
  'key list': 'List the user\'s API keys (without secrets).',
  'key revoke': 'Revoke an API key by id (key_…); it stops working at once.',
  'schema set': 'Set the project\'s JSON Schema (draft 2020-12); refused when the current content breaks it, listing what breaks it.',
  'schema get': 'Print the project\'s JSON Schema.',
  'schema rm': 'Remove the project\'s JSON Schema; writes are no longer checked.',
  export: 'Print the project\'s content as JSON. With --all: the whole instance (users with password hashes, API keys as hashes, projects, members, schemas, contents, change logs, webhooks with encrypted secrets) as JSON lines, for `import --all` into a store of either kind (docs/operations.md#moving-between-stores).',
  import: 'Replace the project\'s content with the JSON object read from stdin (one update: version + 1). With --all: load an `export --all` into an empty store (refused when it holds any user or project), all or nothing; a bad line stops it, naming its line number, with nothing loaded. The importing instance needs the exporting one\'s WEBHOOK_SECRET_KEY.',
  'webhook add': 'Add a webhook to the project: every later change at or below a --path (dot path; may repeat) with an --op (may repeat) is POSTed, signed, to URL. Prints the signing secret once. URLs are checked like the API does (WEBHOOK_ALLOW_PRIVATE).',
  'webhook list': 'List the project\'s webhooks (without secrets): id, state, cursor, URL, filters, and why a disabled one was disabled.',
  'webhook rm': 'Delete a webhook by id (whk_…); its deliveries stop at once.',
  'webhook deliveries': 'Show a webhook\'s last 100 delivery attempts, newest first: time, version, outcome, HTTP status, attempt, duration, error.',
  patch: 'Apply an RFC 6902 JSON Patch (a JSON array of operations) to the project\'s content, atomically, as one change (op "patch"), like PATCH …/content. At most BATCH_LIMIT operations.',
  log: 'Print the project\'s change log, one change per line: version, time, who, what. --since N starts after version N (default 0; older than the history kept: HISTORY_EXPIRED, naming the oldest version kept). --follow keeps printing new changes until Ctrl-C. --json prints each change as its JSON entry. --path a.b prints only the changes that touch that path, as GET …/content/changes?path= answers them (a change above the path as the path\'s new value, marked "(projected)").',
  backup: 'Copy the embedded store while servers keep running (SQLite\'s online backup), check the copy (integrity_check), and print its path and size. Without --out the copy is BACKUP_DIR/contentd-<UTC time>.sqlite (DATA_DIR/backups without BACKUP_DIR). Everything acknowledged before it began is in it.',
  restore: 'Put a backup in place of DATA_DIR\'s store. The file is checked first; refused while a server or another command has the store open (stop them first), and refused when the store holds any user or project unless --force. A refusal changes nothing.'
}

export const MAIN_USAGE = `usage: contentd <command> [arguments] [--help]

Commands:
${Object.values(COMMAND_USAGE).map(line => `  ${line}`).join('\n')}

The commands act directly on the configured store, configured by the same environment
variables as the server (DATA_DIR, STORE, MONGODB_URI, ...), and say on stderr which one
("contentd: data in ./data (sqlite)"). They refuse to create a new embedded store: add
--init to any command to create one in DATA_DIR.`

export function commandHelp (name: string): string {
  return `usage: ${COMMAND_USAGE[name]}\n\n${COMMAND_HELP[name]}`
}

/** A wrong command or argument: printed with its usage line, exit code 2. */
export class UsageError extends Error {
  constructor (message: string, readonly command?: string) {
    super(message)
    this.name = 'UsageError'
  }
}
