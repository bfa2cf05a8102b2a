// Waiting for something another process or the event loop is doing (a log line written, a
// server up), rather than sleeping a fixed time and hoping: checks often, fails loudly at
// the deadline.
export async function until (condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}
