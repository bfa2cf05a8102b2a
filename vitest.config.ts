import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Tests that spawn servers share two cores: keep parallelism modest.
    maxWorkers: 2,
    reporters: ['default', './test/summary-reporter.ts']
  }
})
