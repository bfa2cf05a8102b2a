// Prints one plain closing line, "N passed, N failed[, N skipped]", after vitest's own
// report: CI reads that form whatever the test runner.
import type { Reporter, TestModule } from 'vitest/node'

export default class SummaryReporter implements Reporter {
  onTestRunEnd (testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    const counts = { passed: 0, failed: 0, skipped: 0, pending: 0 }
    for (const module of testModules) {
      for (const test of module.children.allTests()) counts[test.result().state] += 1
    }
    // An unhandled error fails the run even when every test passed.
    const failed = counts.failed + unhandledErrors.length
    const skipped = counts.skipped + counts.pending
    process.stdout.write(`\n${counts.passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}\n`)
  }
}
