/**
 * Node arguments that run a bin (`apps/<app>/bin/*.js`) on the TypeScript
 * sources, as `npm run dev` does, instead of the compiled dist/: tests never
 * depend on a build that may be stale or missing.
 */
export const SOURCE_NODE_ARGS: readonly string[] = ['--conditions=@parley/source', '--import', 'tsx'];
