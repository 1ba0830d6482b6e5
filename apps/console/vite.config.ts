import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';
import { sourceResolve } from '../../vitest.shared.ts';
import { CONSOLE_ROOT, sourceHash } from './build/source-hash.ts';

const DEV_HOST = process.env.PARLEY_CONSOLE_URL ?? 'http://127.0.0.1:5301';

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
  // Workspace packages (@parley/shared) are bundled from their TypeScript sources, never a stale dist/.
  ...sourceResolve,
  root: CONSOLE_ROOT,
  base: '/',
  plugins: [react(), sourceStamp()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    chunkSizeWarningLimit: 1500,
    sourcemap: false,
  },
  // `npm run dev`: the page's /api calls go to a running `parleyctl console`
  // (PARLEY_CONSOLE_URL, default its usual address) as if same-origin.
  server: {
    host: '127.0.0.1',
    port: 5173,
    strictPort: true,
    proxy: {
      '/api': {
        target: DEV_HOST,
        changeOrigin: true,
        configure: (proxy) => proxy.on('proxyReq', (req) => req.getHeader('origin') && req.setHeader('origin', DEV_HOST)),
      },
    },
  },
});
