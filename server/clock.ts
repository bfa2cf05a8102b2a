// The time the services go by (credential expiry, timestamps of new records), in ms since
// the epoch. Passed in rather than read from Date.now() where it decides something, so
// tests move it forward instead of sleeping until a key expires.
export type Clock = () => number

export const systemClock: Clock = () => Date.now()
