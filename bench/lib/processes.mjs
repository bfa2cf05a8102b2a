// Child processes for the benchmark: every server under test runs in its own process, so the
// load generator (autocannon, in this process) never shares an event loop with it.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

export const PROJECT_ROOT = resolve(import.meta.dirname, '..', '..')

const started = new Set()

/**
 * Server settings from a benchmark's environment variable `name`, as space-separated
 * NAME=value pairs (e.g. BENCH_SERVER_ENV='HISTORY=off'), for a bench to weigh a setting.
 */
export function settingsFrom (name) {
  return Object.fromEntries((process.env[name] ?? '').split(/\s+/).filter(Boolean).map(pair => pair.split(/=(.*)/s, 2)))
}

export async function freePort () {
  return new Promise((resolvePort, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address()
      probe.close(() => resolvePort(port))
    })
  })
}

export function tempDir (prefix) {
  return mkdtempSync(join(tmpdir(), `contentd-bench-${prefix}-`))
}

/**
 * Spawns `node <args>` (or another command), waits until `readyPath` answers on the port,
 * and returns a handle. `cleanup` directories are removed when the child is stopped.
 */
export async function startChild ({ command = process.execPath, args, env = {}, port, readyPath = '/', cleanup = [], name, cwd = PROJECT_ROOT }) {
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  const keep = chunk => { output = (output + chunk.toString()).slice(-8000) }
  child.stdout.on('data', keep)
  child.stderr.on('data', keep)
  const exited = new Promise(resolveExit => child.once('exit', code => resolveExit(code)))
  const url = `http://127.0.0.1:${port}`
  const handle = {
    name,
    url,
    port,
    pid: child.pid,
    child,
    output: () => output,
    async stop () {
      started.delete(handle)
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM')
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000)
        await exited
        clearTimeout(timer)
      }
      for (const dir of cleanup) rmSync(dir, { recursive: true, force: true })
    }
  }
  started.add(handle)
  const deadline = Date.now() + 30_000
  for (;;) {
    if (child.exitCode !== null) { await handle.stop(); throw new Error(`${name} exited with ${child.exitCode}: ${output}`) }
    if (readyPath === null) {
      // Not an HTTP server (Redis): ready once the port accepts connections.
      if (await accepts(port)) break
    } else try {
      const response = await fetch(url + readyPath)
      await response.arrayBuffer()
      if (response.status < 500) break
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) { await handle.stop(); throw new Error(`${name} did not start: ${output}`) }
    await new Promise(r => setTimeout(r, 50))
  }
  return handle
}

function accepts (port) {
  return new Promise(resolveProbe => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => { socket.destroy(); resolveProbe(true) })
    socket.once('error', () => resolveProbe(false))
  })
}

/** Stops every child still running (after a failure, or on Ctrl-C). */
export async function stopAll () {
  await Promise.all([...started].map(handle => handle.stop()))
}

/** Resident set size of a process in bytes (Linux /proc). */
export function rssBytes (pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const match = /VmRSS:\s+(\d+)\s+kB/.exec(status)
  if (!match) throw new Error(`no VmRSS for ${pid}`)
  return Number(match[1]) * 1024
}

/** CPU time (user + system) a process has used so far, in milliseconds (Linux /proc). */
export function cpuMs (pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  // Fields after the command name, which is in parentheses and may contain spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const ticks = Number(fields[11]) + Number(fields[12])
  return ticks * 10
}
