// Structured JSON logs (pino). Secrets never reach them: credentials are redacted and
// bodies are not logged.
import { pino, type Logger } from 'pino'
import type { Config } from './config.js'

export type { Logger }

export function createLogger (level: Config['logLevel']): Logger {
  return pino({
    level,
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'], censor: '[redacted]' }
  })
}
