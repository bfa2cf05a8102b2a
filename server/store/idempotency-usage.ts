// How the stores bound Idempotency-Key records per user (MAX_IDEMPOTENCY_KEYS_PER_USER,
// docs/design.md §13b), in a way both can keep cheaply and alike: each record is counted in
// a usage bucket of its user, the bucket its expiry falls in, and a user's live records are
// the sum over the buckets that have not ended — at most BUCKETS_PER_TTL + 1 small rows or
// documents, whatever the count, instead of a count of the records themselves. A bucket is
// 1/24 of IDEMPOTENCY_TTL (an hour by default), so a record counts from its claim until the
// end of the bucket its expiry falls in: at most that much after it expired. Expired
// buckets need no bookkeeping (they stop counting by themselves); a record released before
// its answer, or taken over after expiry, is given back to its bucket.

export const BUCKETS_PER_TTL = 24

/** A bucket's length for IDEMPOTENCY_TTL `ttlMs`: 1/24 of it in whole seconds, at least 1 s. */
export function usageBucketMs (ttlMs: number): number {
  return Math.max(1000, Math.ceil(ttlMs / BUCKETS_PER_TTL / 1000) * 1000)
}

/** The end (ms since the epoch) of the bucket a record claimed at `now` and expiring at `expiresAt` counts in. */
export function usageBucketEnd (now: string, expiresAt: string): number {
  const expires = Date.parse(expiresAt)
  const width = usageBucketMs(expires - Date.parse(now))
  return Math.ceil(expires / width) * width
}
