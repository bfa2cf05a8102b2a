// The server's CPU per change, the one way every scenario measures it (live paths against
// whole-project subscribers, live queries against a path subscription): the server process's
// user + system time from /proc around `changes` writes made one at a time, plus a settle
// time for the deliveries they cause, divided by `changes`. /proc counts whole ticks (10 ms),
// so a run needs enough changes for the ticks to be a small part of it.
import { cpuMs } from './processes.mjs'

/** Server CPU ms per change for `changes` calls of `write(i)`, awaited one after the other. */
export async function serverCpuPerChange (pid, changes, write, settleMs = 1000) {
  const before = cpuMs(pid)
  for (let i = 0; i < changes; i++) await write(i)
  await new Promise(resolve => setTimeout(resolve, settleMs))
  return (cpuMs(pid) - before) / changes
}
