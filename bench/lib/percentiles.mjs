// Percentiles of latency samples, the one definition every scenario's p50 and p99 use: the
// nearest-rank value (no interpolation), so a reported figure is a latency that was measured.

/** The `p`-th percentile (0-100) of values sorted ascending; undefined for no values. */
export function percentile (sorted, p) {
  if (sorted.length === 0) return undefined
  return sorted[Math.min(sorted.length - 1, Math.floor(p / 100 * sorted.length))]
}

/** p50, p99 and the sample count of unsorted values. */
export function summary (values) {
  const sorted = [...values].sort((a, b) => a - b)
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), samples: sorted.length }
}
