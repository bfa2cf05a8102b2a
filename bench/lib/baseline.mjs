// contentd as it was at an older commit, built and started beside this tree's, so a goal
// stated against "today's" code (issue 35: "≤ 0.5× today's", today being 89649a9, the start
// of round three) is measured in the same run instead of quoted. BENCH_BASELINE_REF names the
// commit (default 89649a9); 'none' skips the comparison. The commit's files are taken with
// `git archive` (no worktree is added to the repository) into a directory under the system's
// temporary directory, named by the commit, given that commit's own dependencies (`npm ci`
// from its lockfile: today's tree has dropped some, @socket.io/redis-adapter among them) and
// built with its own scripts/build.mjs once (a minute or two: better-sqlite3 compiles); later
// runs reuse the build.
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, lstatSync, mkdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PROJECT_ROOT } from './processes.mjs'

export const BASELINE_REF = process.env.BENCH_BASELINE_REF ?? '89649a9'

/** { root, ref } of the built baseline, or undefined when BENCH_BASELINE_REF is 'none'. */
export function baselineBuild (ref = BASELINE_REF) {
  if (ref === 'none') return undefined
  const sha = execFileSync('git', ['rev-parse', '--verify', `${ref}^{commit}`], { cwd: PROJECT_ROOT, encoding: 'utf8' }).trim()
  const root = join(tmpdir(), `contentd-bench-baseline-${sha.slice(0, 12)}`)
  // The stamp is written last by a build that succeeded (scripts/build.mjs).
  // A build of before 2026-11-27 09:00 linked this tree's node_modules: made again.
  if (existsSync(join(root, 'dist', '.build-stamp')) && ownDependencies(root)) return { root, ref: sha.slice(0, 7) }
  rmSync(root, { recursive: true, force: true })
  mkdirSync(root, { recursive: true })
  try {
    const archive = join(root, 'source.tar')
    execFileSync('git', ['archive', '--format=tar', '-o', archive, sha], { cwd: PROJECT_ROOT })
    execFileSync('tar', ['-xf', archive, '-C', root])
    rmSync(archive)
    process.stderr.write(`bench: installing and building contentd at ${sha.slice(0, 7)} into ${root} (once)…\n`)
    const install = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] })
    if (install.status !== 0) throw new Error(`npm ci at ${sha.slice(0, 7)} failed (exit ${install.status})`)
    const build = spawnSync(process.execPath, [join(root, 'scripts/build.mjs')], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] })
    if (build.status !== 0) throw new Error(`building ${sha.slice(0, 7)} failed (exit ${build.status})`)
  } catch (error) {
    rmSync(root, { recursive: true, force: true })
    throw error
  }
  return { root, ref: sha.slice(0, 7) }
}

function ownDependencies (root) {
  try {
    return lstatSync(join(root, 'node_modules')).isDirectory()
  } catch {
    return false
  }
}
