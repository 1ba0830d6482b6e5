/** What the patched build's `sqlite_source_id()` ends with. */
export const SOURCE_ID_TAG: string;
/** `text` (sqlite3.c or sqlite3.h) with SQLITE_SOURCE_ID tagged, or undefined when it has none. */
export function tagSourceId(text: string): string | undefined;
/** The amalgamation `text` with the change and the tag, or the reason it cannot be made. */
export function patchAmalgamation(text: string): { text: string; reason?: undefined } | { text?: undefined; reason: string };
/** The `defines` of a .gypi file as [name, value] pairs (`'NAME=VALUE'`, or `'NAME'`, which is 1). */
export function definesOf(gypi: string): [string, string][];
/** Whether `db` (a better-sqlite3 Database) runs the patched build. */
export function isPatched(db: { prepare(sql: string): { get(): unknown } }): boolean;
/** Which build better-sqlite3 loads in this process: `patched` or `stock` (opens an in-memory database to ask). */
export function buildInUse(): 'patched' | 'stock';
