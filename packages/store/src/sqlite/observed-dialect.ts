import type { CompiledQuery, DatabaseConnection, Dialect, Driver, QueryResult } from 'kysely';
import type { WriteHealth } from './write-health.ts';

/** Statements that change the database when they complete outside a transaction. */
const WRITE = /^\s*(commit|insert|update|delete|replace)\b/i;

/** One connection whose statements report failures (and, while failing, successful writes) to `health`. */
class ObservedConnection implements DatabaseConnection {
  constructor(
    readonly inner: DatabaseConnection,
    private readonly health: WriteHealth,
    private readonly inTransaction: () => boolean,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    try {
      const result = await this.inner.executeQuery<R>(query);
      if (this.health.failing && !this.inTransaction() && WRITE.test(query.sql)) this.health.succeeded();
      return result;
    } catch (err) {
      this.health.failed(err);
      throw err;
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

/**
 * Wraps a dialect so every statement's storage failure (disk full, read-only,
 * I/O) reaches the write-health tracker, whichever repository ran it; costs
 * one extra await per statement.
 */
export function observedDialect(inner: Dialect, health: WriteHealth, inTransaction: () => boolean): Dialect {
  return {
    createAdapter: () => inner.createAdapter(),
    createIntrospector: (db) => inner.createIntrospector(db),
    createQueryCompiler: () => inner.createQueryCompiler(),
    createDriver(): Driver {
      const driver = inner.createDriver();
      const wrapped = new WeakMap<DatabaseConnection, ObservedConnection>();
      const observe = (c: DatabaseConnection) => {
        let o = wrapped.get(c);
        if (!o) wrapped.set(c, (o = new ObservedConnection(c, health, inTransaction)));
        return o;
      };
      // Released as the driver's own object (PostgreSQL's returns its pool client through it); begin, commit
      // and rollback run through the observed one, so their failures are seen too.
      const own = (c: DatabaseConnection) => (c instanceof ObservedConnection ? c.inner : c);
      return {
        init: () => driver.init(),
        acquireConnection: async () => observe(await driver.acquireConnection()),
        beginTransaction: (c, settings) => driver.beginTransaction(c, settings),
        commitTransaction: (c) => driver.commitTransaction(c),
        rollbackTransaction: (c) => driver.rollbackTransaction(c),
        releaseConnection: (c) => driver.releaseConnection(own(c)),
        destroy: () => driver.destroy(),
      };
    },
  };
}
