import { builtinModules } from 'node:module';
import { defineConfig } from 'vite';
import { sourceResolve } from '../../vitest.shared.ts';
import { CONSOLE_ROOT } from './build/source-hash.ts';

/**
 * Electron's main process (`--mode main`: one ESM file) and preload
 * (`--mode preload`: one CommonJS file, since a sandboxed preload may only
 * require a few built-in modules), written to dist-electron/. Electron and
 * Node built-ins stay external; the host handlers and TypeBox are bundled.
 */
export default defineConfig(({ mode }) => {
  const preload = mode === 'preload';
  return {
    ...sourceResolve,
    root: CONSOLE_ROOT,
    build: {
      outDir: 'dist-electron',
      emptyOutDir: !preload,
      minify: false,
      sourcemap: false,
      target: 'node20',
      lib: {
        entry: preload ? 'electron/preload.ts' : 'electron/main.ts',
        formats: [preload ? 'cjs' : 'es'],
        fileName: () => (preload ? 'preload.cjs' : 'main.js'),
      },
      rollupOptions: {
        external: ['electron', ...builtinModules, ...builtinModules.map((m) => `node:${m}`)],
        output: { codeSplitting: false },
      },
    },
  };
});
