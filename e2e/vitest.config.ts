import { defineProject } from 'vitest/config';
import { sourceResolve } from '../vitest.shared.ts';

export default defineProject({
  ...sourceResolve,
  test: {
    name: 'e2e',
    include: ['**/*.test.ts'],
    testTimeout: 30_000,
  },
});
