// Flat config: the recommended JavaScript and TypeScript rules, nothing exotic.
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'public/vendor/', 'test-artifacts/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', setImmediate: 'readonly', Buffer: 'readonly', URL: 'readonly', fetch: 'readonly', performance: 'readonly', structuredClone: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly', TextEncoder: 'readonly', queueMicrotask: 'readonly' }
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read configuration through server/config.ts only.' }]
    }
  },
  {
    // The config module is the one place that reads the environment; tests and tools spawn servers with it.
    files: ['server/config.ts', 'test/**', 'bench/**', 'vitest.config.ts'],
    rules: { 'no-restricted-properties': 'off' }
  },
  {
    // The dashboard runs in browsers as plain ES modules.
    files: ['public/**/*.js'],
    languageOptions: {
      globals: { window: 'readonly', document: 'readonly', navigator: 'readonly', sessionStorage: 'readonly', CSS: 'readonly', HTMLElement: 'readonly', HTMLInputElement: 'readonly', HTMLSelectElement: 'readonly', HTMLFormElement: 'readonly', SubmitEvent: 'readonly' }
    }
  },
  {
    // Tests poke at loosely typed JSON responses on purpose.
    files: ['test/**', 'bench/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' }
  }
)
