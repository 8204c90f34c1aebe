import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const source = (file: string) => fileURLToPath(new URL(file, import.meta.url));

export default defineConfig({
  resolve: {
    // Examples and docs import the package by name; tests run them against the sources.
    alias: [
      { find: /^rivulet$/, replacement: source('./index.ts') },
      { find: /^rivulet\/testing$/, replacement: source('./testing/index.ts') },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/setup.ts'],
    environment: 'node',
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Zone-abbreviation conformance cases assume the process zone is UTC.
    env: { TZ: 'UTC' },
  },
});
