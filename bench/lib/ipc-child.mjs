// A scenario's helper process (receivers, members, a plain writer), forked with an IPC channel:
// it sends { type: 'ready', … } once set up, answers each request with a message of the type
// asked for, and closes everything and exits on 'stop'. One shape for all of them, so that a
// child that dies is noticed (its answer rejects) and `stop` always ends it.
import { fork } from 'node:child_process'
import { join } from 'node:path'
import { PROJECT_ROOT } from './processes.mjs'

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))
// Setting up 10,000 connections on a loaded 2-core machine takes about a minute.
const READY_TIMEOUT_MS = 10 * 60_000
const ANSWER_TIMEOUT_MS = 2 * 60_000

/** Forks `script` (relative to the project) with `env` added: { pid, ready, ask, stop }. */
export function forkChild (script, env = {}) {
  const child = fork(join(PROJECT_ROOT, script), [], { env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const exited = new Promise(resolve => child.once('exit', code => resolve(code)))
  // Every wait is bounded: a child that never answers fails the scenario instead of hanging the bench.
  const next = (type, timeoutMs) => {
    let timer
    return Promise.race([
      new Promise(resolve => { const on = m => { if (m?.type === type) { child.off('message', on); resolve(m) } }; child.on('message', on) }),
      exited.then(code => { throw new Error(`${script} exited with ${code}`) }),
      new Promise((_resolve, reject) => { timer = setTimeout(() => reject(new Error(`${script}: no '${type}' within ${timeoutMs / 1000} s`)), timeoutMs) })
    ]).finally(() => clearTimeout(timer))
  }
  const ready = next('ready', READY_TIMEOUT_MS)
  // Awaited by the caller; this only keeps an early exit from being an unhandled rejection.
  ready.catch(() => {})
  return {
    pid: child.pid,
    ready,
    /** Sends `message` and resolves with the child's next message of type `answer`, within `timeoutMs`. */
    ask (message, answer = message, timeoutMs = ANSWER_TIMEOUT_MS) {
      const reply = next(answer, timeoutMs)
      child.send(message)
      return reply
    },
    async stop () {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.send('stop')
      await Promise.race([exited, sleep(5000)])
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    }
  }
}
