/** What other workspaces (migrator, bench, tests) may use of the server. */
export { loadConfig, ConfigError, type Config } from './config/config.ts';
export { OPTIONS, envName } from './config/options.ts';
export { startServer, type RunningServer } from './server.ts';
export { createLogger } from './log.ts';
export { openSqlite, type Db } from './store/db.ts';
export { openEmbeddedStore, type Store } from './store/store.ts';
export type { Database } from './store/schema.ts';
export { tokenDigest } from './identity/token.service.ts';
export { versionInfo, type VersionInfo } from './version.ts';
export { createSnowflake } from './messaging/snowflake.ts';
