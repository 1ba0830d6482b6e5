import { defineProject } from 'vitest/config';
import { sourceResolve } from '../../vitest.shared.ts';

export default defineProject({
  ...sourceResolve,
  test: {
    name: 'console',
    include: ['src/**/*.test.ts', 'host/**/*.test.ts', 'electron/**/*.test.ts'],
    environment: 'node',
  },
});
