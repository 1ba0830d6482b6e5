import { createHash } from 'node:crypto';
import type { Db } from './db.ts';
import { createSnapshotRepository } from './repositories/snapshot.repository.ts';
import { CONTENT_TABLES, ID_COLUMNS } from './tables.ts';

/** A store's content fingerprint and its row count per table. */
export interface ContentDigest {
  sha256: string;
  rows: Record<string, number>;
}

/**
 * SHA-256 over every row of every content table in key order; also the row
 * count per table. Each table starts with `#<name>\n`; each row is hashed as
 * its cells, tab-separated, newline-terminated: `i:<integer>`,
 * `s:<JSON string>`, and for bytes `b:<length>:` followed by the bytes
 * themselves (no text encoding of payloads). Text is handed to the hash in
 * chunks of rows. A migration marker records it, so any change to a store's
 * content shows.
 */
export async function contentDigest(db: Db): Promise<ContentDigest> {
  const snapshot = createSnapshotRepository(db);
  const hash = createHash('sha256');
  const rows: Record<string, number> = {};
  let text = '';
  const flush = () => {
    if (text !== '') hash.update(text);
    text = '';
  };
  for (const t of CONTENT_TABLES) {
    let n = 0;
    text += `#${t.table}\n`;
    for await (const page of snapshot.scan(t.table)) {
      for (const row of page as Array<Record<string, unknown>>) {
        t.columns.forEach((c, i) => {
          const v = row[c];
          if (i > 0) text += '\t';
          if (v instanceof Uint8Array) {
            text += `b:${v.byteLength}:`;
            flush();
            hash.update(v);
          } else if (typeof v === 'number' || typeof v === 'bigint' || ID_COLUMNS.has(c)) text += `i:${String(v)}`;
          else text += `s:${JSON.stringify(v)}`;
        });
        text += '\n';
        if (text.length > 1 << 16) flush();
        n++;
      }
    }
    rows[t.table] = n;
  }
  flush();
  return { sha256: hash.digest('hex'), rows };
}
