// Password hashing with argon2id at the OWASP Password Storage Cheat Sheet's parameters
// (m = 19 MiB, t = 2, p = 1). The hash string carries its parameters, so they can be
// raised later without breaking existing accounts.
import argon2 from 'argon2'

const OWASP_ARGON2ID = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const

export function hashPassword (password: string): Promise<string> {
  return argon2.hash(password, OWASP_ARGON2ID)
}

// Verified against when the user does not exist, so a login for an unknown name costs the
// same time as one with a wrong password and does not reveal which names exist.
let decoy: Promise<string> | undefined

export async function verifyPassword (hash: string | null, password: string): Promise<boolean> {
  if (hash === null) {
    decoy ??= hashPassword('contentd-decoy-password')
    await argon2.verify(await decoy, password).catch(() => false)
    return false
  }
  try {
    return await argon2.verify(hash, password)
  } catch {
    return false
  }
}
