import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { buildInUse, definesOf, isPatched, patchAmalgamation, SOURCE_ID_TAG } from '@parley/sqlite-build';
import SqliteDatabase from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openEmbeddedStore } from '../src/index.ts';

/**
 * The SQLite the store runs on (`@parley/sqlite-build`): better-sqlite3's own SQLite rebuilt
 * with one change to its page cache, so that a commit's truncation stops scanning the whole
 * cache (README, A commit's fixed cost). What must hold: the change applies to the SQLite
 * better-sqlite3 ships (so an upgrade that moves it fails here, not silently at install), the
 * install built it (CI), the build keeps every compile option better-sqlite3 gives its own
 * SQLite, and databases written through the changed path (B-tree splits that swap page numbers)
 * are intact.
 */

const pkg = dirname(createRequire(import.meta.url).resolve('better-sqlite3/package.json'));
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function memory(): SqliteDatabase.Database {
  return new SqliteDatabase(':memory:');
}

describe('the patched SQLite', () => {
  it('applies to the amalgamation better-sqlite3 ships, at exactly one place, and only once', () => {
    const source = readFileSync(join(pkg, 'deps', 'sqlite3', 'sqlite3.c'), 'utf8');
    const once = patchAmalgamation(source);
    expect(once.reason).toBeUndefined();
    expect(once.text).toContain('sqlite3PendingByte/pCache->szPage');
    expect(once.text).toMatch(new RegExp(`#define SQLITE_SOURCE_ID +"[^"]*${SOURCE_ID_TAG}"`));
    expect(patchAmalgamation(once.text!).reason).toMatch(/pcache1Rekey is not as expected/);
    expect(patchAmalgamation(source.replace('pCache->iMaxKey = iNew;', 'pCache->iMaxKey = iNew + 0;')).reason).toMatch(/not as expected/);
  });

  it('is what better-sqlite3 runs (the install builds it; CI requires it)', (context) => {
    const db = memory();
    const patched = isPatched(db);
    const id = db.prepare('select sqlite_source_id() as id').get() as { id: string };
    db.close();
    if (!patched && process.env.CI !== 'true') {
      context.skip(`better-sqlite3 runs the stock SQLite (${id.id}): \`npm run build -w @parley/sqlite-build\` says why`);
    }
    expect(patched, id.id).toBe(true);
  });

  it('keeps every compile option better-sqlite3 gives its own SQLite (deps/defines.gypi)', () => {
    const db = memory();
    const options = (db.pragma('compile_options') as { compile_options: string }[]).map((r) => r.compile_options);
    db.close();
    const wanted = definesOf(readFileSync(join(pkg, 'deps', 'defines.gypi'), 'utf8')).filter(([name]) => name.startsWith('SQLITE_'));
    expect(wanted.length).toBeGreaterThan(20);
    // SQLite lists the options it knows without the prefix, with a value unless it is a flag.
    let listed = 0;
    for (const [name, value] of wanted) {
      const short = name.slice('SQLITE_'.length);
      const found = options.find((o) => o === short || o.startsWith(`${short}=`));
      if (found === undefined) continue;
      listed++;
      if (found.includes('=')) expect(found, name).toBe(`${short}=${value}`);
    }
    expect(listed).toBeGreaterThan(20);
    // The ones a custom build loses first, and the store relies on: a serialized-per-connection mutex, WAL's sync default.
    expect(options).toContain('THREADSAFE=2');
    expect(options).toContain('DEFAULT_WAL_SYNCHRONOUS=1');
    expect(options).toContain('DQS=0');
  });

  it('leaves a database intact through thousands of commits of B-tree splits that swap page numbers', () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-sqlite-build-'));
    dirs.push(dir);
    const db = new SqliteDatabase(join(dir, 't.db'));
    // As the writer thread has it: 1 KiB pages, a 4 MB cache, WAL; random keys split leaves all over two indexes.
    db.pragma('page_size = 1024');
    db.pragma('journal_mode = WAL');
    db.pragma('cache_size = -4000');
    db.exec('create table m (id integer primary key, k blob not null, c text not null, s integer not null, v text not null)');
    db.exec('create index m_k on m (k); create unique index m_cs on m (c, s)');
    const insert = db.prepare('insert into m (k, c, s, v) values (randomblob(8), ?, ?, ?)');
    const seqs = new Map<string, number>();
    let rows = 0;
    const batch = db.transaction((n: number, round: number) => {
      for (let i = 0; i < n; i++) {
        const c = `ch${(round * 7919 + i * 104729) % 500}`;
        const s = (seqs.get(c) ?? 0) + 1;
        seqs.set(c, s);
        insert.run(c, s, 'x'.repeat(40 + ((round + i) % 60)));
        rows++;
      }
    });
    const prune = db.prepare('delete from m where id % 5 = ? and id < ?');
    for (let round = 0; round < 2000; round++) {
      batch(25, round);
      if (round % 400 === 399) rows -= prune.run(round % 5, round * 20).changes;
    }
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    expect((db.prepare('select count(*) as n from m').get() as { n: number }).n).toBe(rows);
    expect((db.prepare('select count(*) as n from m indexed by m_k').get() as { n: number }).n).toBe(rows);
    db.close();
  });

  it('is named by the embedded store', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-sqlite-build-'));
    dirs.push(dir);
    const store = await openEmbeddedStore({ dataDir: dir, sync: 'full' });
    try {
      expect(store.sqlitePatched).toBe(buildInUse() === 'patched');
    } finally {
      await store.close();
    }
  });
});
