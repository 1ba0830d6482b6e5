import type { Kysely } from 'kysely';
import type { Database } from './schema.ts';

/**
 * A connection to the store, whatever the dialect. Repositories take one and
 * write only SQL that SQLite and PostgreSQL both accept; what is particular to
 * one dialect (pragmas, busy handling, failure codes) stays under `sqlite/`.
 */
export type Db = Kysely<Database>;
