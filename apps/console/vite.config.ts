import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';
import { CONSOLE_ROOT, sourceHash } from './build/source-hash.ts';

/** Records what the build was made from, so a stale dist can be detected (e2e/console/global-setup.ts). */
function sourceStamp(): Plugin {
  return {
    name: 'parley-source-stamp',
    apply: 'build',
    closeBundle() {
      writeFileSync(join(CONSOLE_ROOT, 'dist', '.source-hash'), `${sourceHash()}\n`);
    },
  };
}

/**
 * The web build, shared by `parleyctl console` and Electron. Absolute base
 * (`/`): client routes like /nodes/x are served index.html by both hosts.
 */
export default defineConfig({
  root: CONSOLE_ROOT,
  base: '/',
  plugins: [react(), sourceStamp()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    chunkSizeWarningLimit: 1500,
    sourcemap: false,
  },
  server: { port: 5173, strictPort: true },
});
