// What the numbers were measured on: they mean little without it.
import { cpus, totalmem, loadavg, release, platform } from 'node:os'

export function describeMachine () {
  const cores = cpus()
  return {
    cpu: cores[0]?.model.trim() ?? 'unknown',
    cores: cores.length,
    memoryGiB: (totalmem() / 1024 ** 3).toFixed(1),
    node: process.version,
    os: `${platform()} ${release()}`,
    loadAtStart: loadavg().map(n => n.toFixed(2)).join(' ')
  }
}
