import { defaultClientConditions, defaultServerConditions, type UserConfig } from 'vite';

/**
 * Resolve options of every workspace's Vitest project: workspace packages are
 * imported from their TypeScript sources (the `@parley/source` export
 * condition), never from a dist/ that may be stale or not built yet. `ssr`
 * applies to tests in Node, the top-level `resolve` to browser-like ones.
 */
export const sourceResolve = {
  resolve: { conditions: ['@parley/source', ...defaultClientConditions] },
  ssr: { resolve: { conditions: ['@parley/source', ...defaultServerConditions] } },
} satisfies UserConfig;
