export * from './contract.ts';
export { createHostHandlers, type HostDeps } from './handlers.ts';
export { NodeRegistry, normaliseNodeUrl, type NodeEntry } from './node-registry.ts';
export { startConsoleServer, type ConsoleServer, type ConsoleServerOptions } from './web-server.ts';
export { isAllowedOpsPath } from './ops-paths.ts';
import { fileURLToPath } from 'node:url';

/** Where `npm run build -w apps/console` writes the web app. */
export const CONSOLE_DIST = fileURLToPath(new URL('../dist', import.meta.url));
export { StageRunner } from './migration/runner.ts';
export type { ToolCommand } from './migration/tool.ts';
