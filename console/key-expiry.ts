// The expiry choices of the key form, turned into the expiresAt the API takes. Pure: tested
// in test/console/pure.test.ts.

export const EXPIRY_CHOICES: ReadonlyArray<{ value: string, label: string, days?: number }> = [
  { value: 'never', label: 'Never' },
  { value: '1', label: 'In 1 day', days: 1 },
  { value: '7', label: 'In 7 days', days: 7 },
  { value: '30', label: 'In 30 days', days: 30 },
  { value: '90', label: 'In 90 days', days: 90 },
  { value: '365', label: 'In a year', days: 365 },
  { value: 'date', label: 'On a date…' }
]

/** The expiry to send for a choice, or a problem to show. */
export function expiryOf (choice: string, date: string, now = Date.now()): { expiresAt?: string } | { problem: string } {
  if (choice === 'never') return {}
  const days = EXPIRY_CHOICES.find(c => c.value === choice)?.days
  if (days !== undefined) return { expiresAt: new Date(now + days * 86_400_000).toISOString() }
  // A date input gives "YYYY-MM-DD": the key lasts until the end of that day, local time.
  const end = new Date(`${date}T23:59:59`)
  if (Number.isNaN(end.getTime())) return { problem: 'Choose the date the key stops working' }
  if (end.getTime() <= now) return { problem: 'Choose a date in the future' }
  return { expiresAt: end.toISOString() }
}
