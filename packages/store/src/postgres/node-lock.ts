import { parsePostgresUrl } from './url.ts';
import { storeLabel } from './open.ts';
import { StoreIntegrityError } from '../sqlite/integrity.ts';

/** Another process runs this node id on the same schema. */
export class NodeLockedError extends Error {
  constructor(
    readonly nodeId: number,
    readonly store: string,
  ) {
    super(
      `node.id ${nodeId} is already running on ${store}: another parley process holds its lock; ` +
        'each node of a cluster needs its own node.id (message ids embed it)',
    );
    this.name = 'NodeLockedError';
  }
}

/** A held node lock. */
export interface NodeLock {
  release(): Promise<void>;
}

/**
 * The PostgreSQL counterpart of the data-directory lock: a session advisory
 * lock on (schema, node id), held on a connection of its own for the process's
 * life. The server drops it when the process dies however it dies (the
 * connection closes), so a crash leaves nothing stale; a second process with
 * the same node id on the same schema fails with `NodeLockedError`. If the
 * connection is lost the lock is gone: `onLost` is told, once.
 */
export async function lockNode(url: string, nodeId: number, onLost: (err: Error) => void): Promise<NodeLock> {
  const location = parsePostgresUrl(url);
  // Loaded here, not with the store package: an embedded node never needs it.
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: location.url, connectionTimeoutMillis: 10_000, application_name: 'parley-node-lock' });
  let released = false;
  let lost = false;
  const lose = (err: Error) => {
    if (released || lost) return;
    lost = true;
    onLost(err);
  };
  client.on('error', lose);
  client.on('end', () => lose(new Error('the node lock connection closed')));
  try {
    await client.connect();
    const { rows } = await client.query<{ ok: boolean }>('select pg_try_advisory_lock(hashtext($1), $2) as ok', [
      `parley:${location.schema}`,
      nodeId,
    ]);
    if (rows[0]?.ok !== true) throw new NodeLockedError(nodeId, storeLabel(location));
  } catch (err) {
    released = true;
    await client.end().catch(() => {});
    if (err instanceof NodeLockedError) throw err;
    const e = err as Error & { code?: string };
    throw new StoreIntegrityError(storeLabel(location), [`cannot connect: ${e.code ? `${e.code}: ` : ''}${e.message}`]);
  }
  return {
    async release() {
      if (released) return;
      released = true;
      await client.end().catch(() => {});
    },
  };
}
