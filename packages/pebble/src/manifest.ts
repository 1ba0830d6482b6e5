/**
 * MANIFEST replay: applies every version edit (deletions first, then additions)
 * to produce the live sstables per level, and checks that files of L1..L6 do
 * not overlap (Pebble's "collided on sort keys" check).
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { Decoder } from './decoder.ts';
import { PebbleCorruptionError } from './errors.ts';
import { compareBytes, formatKey, type InternalKey } from './internal-key.ts';
import { readLogRecords, type LogEnd } from './log-reader.ts';
import { decodeVersionEdit, type FileMetadata } from './version-edit.ts';

/** The state a MANIFEST describes. */
export interface ManifestState {
  comparer: string | undefined;
  /** MinUnflushedLogNum: WALs numbered at or above it still hold data. */
  logNum: number;
  nextFileNum: number;
  lastSeq: number;
  /** Live files per level 0..6; L0 newest first (by largest seqnum), L1+ in key order. */
  levels: FileMetadata[][];
  edits: number;
  end: LogEnd;
}

/** Orders internal keys: user key ascending, then trailer (seq, kind) descending. */
export function compareInternal(a: InternalKey, b: InternalKey): number {
  const c = compareBytes(a.userKey, b.userKey);
  if (c !== 0) return c;
  if (a.seq !== b.seq) return a.seq > b.seq ? -1 : 1;
  return b.kind - a.kind;
}

/** Reads and replays a MANIFEST file. Corruption errors name the file and the record offset. */
export function readManifest(path: string): ManifestState {
  const buf = readFileSync(path);
  const { records, end } = readLogRecords(buf, path, 0, 'stop');
  const levels = Array.from({ length: 7 }, () => new Map<number, FileMetadata>());
  const addedAt = new Map<number, number>();
  const state: ManifestState = { comparer: undefined, logNum: 0, nextFileNum: 0, lastSeq: 0, levels: [], edits: 0, end };
  for (const rec of records) {
    const edit = decodeVersionEdit(new Decoder(rec.data, 0, rec.data.length, path, undefined, `version edit at offset ${rec.offset}`));
    state.edits++;
    if (edit.comparer !== undefined) state.comparer = edit.comparer;
    if (edit.logNum !== undefined && edit.logNum !== 0) state.logNum = edit.logNum;
    if (edit.nextFileNum !== undefined) state.nextFileNum = edit.nextFileNum;
    if (edit.lastSeq !== undefined) state.lastSeq = edit.lastSeq;
    for (const del of edit.deleted) {
      if (!levels[del.level]!.delete(del.fileNum)) {
        throw new PebbleCorruptionError(path, rec.offset, `edit deletes file ${del.fileNum} which is not in L${del.level}`);
      }
    }
    for (const add of edit.added) {
      levels[add.level]!.set(add.meta.fileNum, add.meta);
      addedAt.set(add.meta.fileNum, rec.offset);
    }
  }
  checkLevels(levels, path, addedAt);
  state.levels = levels.map((m, lv) =>
    lv === 0
      ? [...m.values()].sort((a, b) => b.largestSeq - a.largestSeq || b.fileNum - a.fileNum)
      : [...m.values()].sort((a, b) => compareInternal(a.smallest, b.smallest)),
  );
  return state;
}

/** L1..L6 files must be disjoint; an overlap is reported at the offset of the edit that added the later file. */
function checkLevels(levels: Map<number, FileMetadata>[], path: string, addedAt: Map<number, number>): void {
  for (let lv = 1; lv < levels.length; lv++) {
    const files = [...levels[lv]!.values()].sort((a, b) => compareInternal(a.smallest, b.smallest));
    for (let i = 1; i < files.length; i++) {
      const prev = files[i - 1]!;
      const cur = files[i]!;
      if (compareInternal(prev.largest, cur.smallest) >= 0) {
        const offset = Math.max(addedAt.get(prev.fileNum) ?? 0, addedAt.get(cur.fileNum) ?? 0);
        throw new PebbleCorruptionError(
          path,
          offset,
          `files ${fileName(cur.fileNum)} and ${fileName(prev.fileNum)} overlap in L${lv} ` +
            `(${formatKey(prev.largest)} >= ${formatKey(cur.smallest)}) in ${basename(path)}`,
        );
      }
    }
  }
}

/** `NNNNNN` zero-padded file number, as in file names. */
export function fileName(num: number): string {
  return String(num).padStart(6, '0');
}
