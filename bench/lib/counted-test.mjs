// Goals that are counts, not timings, are asserted by a vitest file that also prints them; a
// scenario runs that file in a child process and reads the printed line, so the goals table
// shows the same numbers the test checks.
import { spawn } from 'node:child_process'
import { PROJECT_ROOT } from './processes.mjs'

/** Runs one vitest file: its exit code and everything it printed. */
export function runCountingTest (file) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', file], { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    let text = ''
    child.stdout.on('data', chunk => { text += chunk })
    child.stderr.on('data', chunk => { text += chunk })
    child.on('error', reject)
    child.on('close', code => resolve({ code, text }))
  })
}
