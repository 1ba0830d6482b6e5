// ESLint for every workspace (flat config; a workspace's `npm run lint` runs `eslint .`, which finds
// this file). Formatting is Prettier's job (`npm run format`), so stylistic rules are left off.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['**/dist/', '**/node_modules/', '**/coverage/', '**/.tmp/', 'packages/sqlite-build/build/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: { ...globals.node } },
    rules: {
      // `_name` marks a parameter or binding kept for its position.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // Two rules that need types: a promise nobody awaits or catches loses its error (an unhandled
    // rejection ends the process), and a promise where a callback's result is ignored does too.
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: { '@typescript-eslint/no-floating-promises': 'error', '@typescript-eslint/no-misused-promises': 'error' },
  },
  {
    // Node's `Buffer`, `process` and `performance` globals are accessors on `globalThis` (a getter
    // each), so every use of one in optimized code goes through a global load IC that calls the
    // getter (~150 instructions; twice a group delivery before this rule). Imported, each is a
    // module binding V8 reads directly.
    files: ['packages/*/src/**/*.ts', 'apps/*/src/**/*.ts', 'apps/*/bench/**/*.ts', 'apps/*/bin/**', 'apps/console/electron/**/*.ts'],
    ignores: ['**/*.test.ts', 'apps/console/src/**'],
    rules: {
      'no-restricted-globals': [
        'error',
        { name: 'Buffer', message: "Import it: import { Buffer } from 'node:buffer' (the global is a getter)." },
        { name: 'process', message: "Import it: import process from 'node:process' (the global is a getter)." },
        { name: 'performance', message: "Import it: import { performance } from 'node:perf_hooks' (the global is a getter)." },
      ],
    },
  },
  {
    // CommonJS entry points (packages/wkcrypto loads its compiled addon with require).
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Tests read JSON reports and HTTP bodies whose shape is what they assert.
    files: ['**/test/**', '**/*.test.ts', 'e2e/**', 'test-support/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  prettier,
);
