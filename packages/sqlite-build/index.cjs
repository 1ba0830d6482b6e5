'use strict';
// The page-cache change build.mjs makes to better-sqlite3's SQLite (README.md), and how the store
// tells the build in use. Used by build.mjs, the store and the tests.

/** What the patched build's `sqlite_source_id()` ends with. */
const SOURCE_ID_TAG = ' parley-pcache1';

/** The change: the exact text of pcache1Rekey it replaces (once) and what replaces it. */
const FROM = `  pCache->apHash[hNew] = pPage;
  if( iNew>pCache->iMaxKey ){
    pCache->iMaxKey = iNew;
  }
`;
const TO = `  pCache->apHash[hNew] = pPage;
  /* Parley: balance_nonroot() swaps two pages' numbers through the locking
  ** page's number, which no page keeps (the next rekey moves it on); counted
  ** here it made the truncation at every commit scan the whole cache. */
  if( iNew>pCache->iMaxKey
   && iNew!=(unsigned int)(sqlite3PendingByte/pCache->szPage)+1 ){
    pCache->iMaxKey = iNew;
  }
`;
const SOURCE_ID = /^(#define SQLITE_SOURCE_ID +"[^"]*)"/m;

/** `text` (sqlite3.c or sqlite3.h) with SQLITE_SOURCE_ID tagged, or undefined when it has none. */
function tagSourceId(text) {
  return SOURCE_ID.test(text) ? text.replace(SOURCE_ID, `$1${SOURCE_ID_TAG}"`) : undefined;
}

/** The amalgamation `text` with the change and the tag, or the reason it cannot be made. */
function patchAmalgamation(text) {
  const at = text.indexOf(FROM);
  if (at < 0 || text.indexOf(FROM, at + 1) >= 0) return { reason: 'pcache1Rekey is not as expected (SQLite changed)' };
  const tagged = tagSourceId(text.replace(FROM, TO));
  return tagged === undefined ? { reason: 'no SQLITE_SOURCE_ID to tag' } : { text: tagged };
}

/** The `defines` of a .gypi file as [name, value] pairs (`'NAME=VALUE'`, or `'NAME'`, which is 1). */
function definesOf(gypi) {
  const list = /'defines'\s*:\s*\[([^\]]*)\]/.exec(gypi)?.[1] ?? '';
  return [...list.matchAll(/'([A-Za-z_][A-Za-z0-9_]*)(?:=([^']*))?'/g)].map((m) => [m[1], m[2] ?? '1']);
}

/** Whether `db` (a better-sqlite3 Database) runs the patched build. */
function isPatched(db) {
  const id = db.prepare('select sqlite_source_id() as id').get().id;
  return typeof id === 'string' && id.endsWith(SOURCE_ID_TAG);
}

/** Which build better-sqlite3 loads in this process: `patched` or `stock` (opens an in-memory database to ask). */
function buildInUse() {
  const Database = require('better-sqlite3');
  const db = new Database(':memory:');
  try {
    return isPatched(db) ? 'patched' : 'stock';
  } finally {
    db.close();
  }
}

module.exports = { SOURCE_ID_TAG, tagSourceId, patchAmalgamation, definesOf, isPatched, buildInUse };
