import { sql, type RawBuilder } from 'kysely';

/** The SQL engines the store runs on. */
export type Dialect = 'sqlite' | 'postgres';

/**
 * The database's own clock in unix milliseconds, as an SQL expression: cluster
 * leases and node heartbeats are timed by the one clock every node shares, not
 * by each node's.
 */
export function nowMs(dialect: Dialect): RawBuilder<number> {
  return dialect === 'postgres'
    ? sql<number>`cast(floor(extract(epoch from clock_timestamp()) * 1000) as bigint)`
    : sql<number>`cast(unixepoch('subsec') * 1000 as integer)`;
}
