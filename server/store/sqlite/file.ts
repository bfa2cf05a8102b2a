// Where the embedded store lives: one file in DATA_DIR. Its own module so the CLI can tell
// whether a store exists without loading the native SQLite module.
import { join } from 'node:path'

export const sqliteFile = (dataDir: string): string => join(dataDir, 'contentd.sqlite')
