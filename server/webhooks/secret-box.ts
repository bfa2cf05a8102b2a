// Webhook signing secrets at rest (SECURITY.md): encrypted with AES-256-GCM under a key that
// is never in the database, so a dump of the database alone cannot sign a single payload.
// The key comes from WEBHOOK_SECRET_KEY, or else from a key file generated next to the
// embedded store's file (DATA_DIR/webhook-secret.key, mode 0600): enough for one node,
// while several nodes (MongoDB) must share WEBHOOK_SECRET_KEY. Each ciphertext is bound to
// its webhook's id, so a ciphertext copied onto another webhook does not decrypt.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const FORMAT = 'v1'
const KEY_FILE = 'webhook-secret.key'

export class SecretDecryptionError extends Error {
  constructor () {
    super('the webhook secret cannot be decrypted with this node\'s key (WEBHOOK_SECRET_KEY must be the same on every node)')
  }
}

export class SecretBox {
  private loaded: Buffer | undefined

  private constructor (private readonly loadKey: () => Buffer) {}

  /**
   * From WEBHOOK_SECRET_KEY when set (any text of 32+ characters, hashed to 256 bits), else
   * the key file, read (or made) when first needed: a server without webhooks makes none.
   */
  static fromConfig (config: { dataDir: string, webhooks: { secretKey: string | undefined } }): SecretBox {
    const text = config.webhooks.secretKey
    if (text !== undefined) return new SecretBox(() => createHash('sha256').update(text).digest())
    return new SecretBox(() => keyFile(config.dataDir))
  }

  private get key (): Buffer {
    this.loaded ??= this.loadKey()
    return this.loaded
  }

  /** A new signing secret in the Standard Webhooks form: whsec_ + base64 of 32 random bytes. */
  static newSecret (): string {
    return 'whsec_' + randomBytes(32).toString('base64')
  }

  seal (secret: string, webhookId: string): string {
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', this.key, iv)
    cipher.setAAD(Buffer.from(webhookId))
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()])
    return [FORMAT, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), sealed.toString('base64url')].join('.')
  }

  /** Throws SecretDecryptionError when the key (or the webhook) is not the one it was sealed with. */
  open (ciphertext: string, webhookId: string): string {
    const [format, iv, tag, sealed] = ciphertext.split('.')
    if (format !== FORMAT || iv === undefined || tag === undefined || sealed === undefined) throw new SecretDecryptionError()
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'))
      decipher.setAAD(Buffer.from(webhookId))
      decipher.setAuthTag(Buffer.from(tag, 'base64url'))
      return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64url')), decipher.final()]).toString('utf8')
    } catch {
      throw new SecretDecryptionError()
    }
  }
}

/**
 * Reads the key file, creating it when missing: written whole under another name, then
 * linked into place (link fails when the name exists), so two processes starting together
 * agree on one key and neither reads a half-written file.
 */
function keyFile (dataDir: string): Buffer {
  const path = join(dataDir, KEY_FILE)
  mkdirSync(dataDir, { recursive: true })
  const draft = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`
  writeFileSync(draft, randomBytes(32).toString('base64') + '\n', { mode: 0o600 })
  try {
    linkSync(draft, path)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e
  } finally {
    unlinkSync(draft)
  }
  const key = Buffer.from(readFileSync(path, 'utf8').trim(), 'base64')
  if (key.length !== 32) throw new Error(`${path} does not hold a 32-byte key (base64)`)
  return key
}
