/** What other workspaces' tests (console, e2e) may use of the server: start one in their process. */
export { loadConfig, ConfigError, type Config } from './config/config.ts';
export { OPTIONS, envName } from './config/options.ts';
export { startServer, type RunningServer } from './server.ts';
export { createLogger } from './log.ts';
