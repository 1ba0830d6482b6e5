import type { ContentTable, Row, StoreReader } from '@parley/store';

/** Every row of a table of a target store, in key order (64-bit ids as decimal text). */
export async function rowsOf<T extends ContentTable>(store: StoreReader, table: T): Promise<Row<T>[]> {
  const out: Row<T>[] = [];
  for await (const page of store.snapshot.scan(table)) out.push(...page);
  return out;
}
