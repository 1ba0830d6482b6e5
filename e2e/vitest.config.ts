import { defineProject } from 'vitest/config';
import { sourceResolve } from '../vitest.shared.ts';

export default defineProject({
  ...sourceResolve,
  test: {
    name: 'e2e',
    include: ['**/*.test.ts'],
    testTimeout: 30_000,
    // The browser tests need the built console (rebuilt when its sources changed).
    globalSetup: ['./console/build-console.ts'],
    // Each browser test file runs real nodes, the console and Chromium: one file at a time.
    fileParallelism: false,
  },
});
