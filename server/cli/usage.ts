// Help texts of the admin CLI. Every command answers --help; a wrong command or argument
// prints the relevant usage line to stderr and exits 2.

export const COMMAND_USAGE: Record<string, string> = {
  serve: 'contentd serve',
  'user create': 'contentd user create @name [--password P]   (without --password the password is read from stdin)',
  'user list': 'contentd user list',
  'project create': 'contentd project create @name/slug [--name "Display name"]',
  'key create': 'contentd key create @name --name N --permission read|write [--project @name/slug]... [--expires 30d]',
  'key list': 'contentd key list @name',
  'key revoke': 'contentd key revoke ID',
  export: 'contentd export @name/slug > file.json',
  import: 'contentd import @name/slug < file.json',
  'webhook add': 'contentd webhook add @name/slug URL [--path P]... [--op OP]... [--description D]',
  'webhook list': 'contentd webhook list @name/slug',
  'webhook rm': 'contentd webhook rm ID',
  'webhook deliveries': 'contentd webhook deliveries ID'
}

export const COMMAND_HELP: Record<string, string> = {
  serve: 'Start the server (HTTP + Socket.IO), exactly like `npm start`.',
  'user create': 'Create a user (useful with SIGNUP=closed). The password is hashed like signup does.',
  'user list': 'List all users with their creation time.',
  'project create': 'Create a project owned by the user; its content starts as {}.',
  'key create': 'Create an API key for the user and print it once, last on its line. --project may repeat; without it the key reaches every project the user can access. --expires takes 30d, 12h, 90m or 45s.',
  'key list': 'List the user\'s API keys (without secrets).',
  'key revoke': 'Revoke an API key by id (key_…); it stops working at once.',
  export: 'Print the project\'s content as JSON.',
  import: 'Replace the project\'s content with the JSON object read from stdin (one update: version + 1).',
  'webhook add': 'Add a webhook to the project: every later change at or below a --path (dot path; may repeat) with an --op (may repeat) is POSTed, signed, to URL. Prints the signing secret once. URLs are checked like the API does (WEBHOOK_ALLOW_PRIVATE).',
  'webhook list': 'List the project\'s webhooks (without secrets): id, state, cursor, URL, filters, and why a disabled one was disabled.',
  'webhook rm': 'Delete a webhook by id (whk_…); its deliveries stop at once.',
  'webhook deliveries': 'Show a webhook\'s last 100 delivery attempts, newest first: time, version, outcome, HTTP status, attempt, duration, error.'
}

export const MAIN_USAGE = `usage: contentd <command> [arguments] [--help]

Commands:
${Object.values(COMMAND_USAGE).map(line => `  ${line}`).join('\n')}

The commands act directly on the configured store, configured by the same environment
variables as the server (DATA_DIR, STORE, MONGODB_URI, ...).`

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
