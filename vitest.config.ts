import { defineConfig } from 'vitest/config';

// One run over every workspace: `npm test` at the root. Each workspace also
// runs alone with its own `npm test`.
export default defineConfig({
  test: {
    projects: ['packages/*', 'apps/*', 'e2e'],
    globalSetup: ['./test-support/global-setup.ts'],
  },
});
