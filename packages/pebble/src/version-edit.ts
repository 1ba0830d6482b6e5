/**
 * Decoder of one MANIFEST record (a version edit), Pebble v1.0.0 tags only.
 * Tags of newer Pebble versions (virtual tables, column families) are rejected.
 */
import { Buffer } from 'node:buffer';
import { Decoder } from './decoder.ts';
import { PebbleUnsupportedError } from './errors.ts';
import { decodeInternalKey, type InternalKey } from './internal-key.ts';

/** A live sstable as the MANIFEST describes it. Sizes in bytes. */
export interface FileMetadata {
  fileNum: number;
  size: number;
  smallest: InternalKey;
  largest: InternalKey;
  smallestSeq: number;
  largestSeq: number;
}

/** Fields of one version edit that the reader uses. */
export interface VersionEdit {
  comparer?: string;
  logNum?: number;
  nextFileNum?: number;
  lastSeq?: number;
  deleted: { level: number; fileNum: number }[];
  added: { level: number; meta: FileMetadata }[];
}

const NUM_LEVELS = 7;

/** Decodes the version edit in `d` (one whole record). */
export function decodeVersionEdit(d: Decoder): VersionEdit {
  const edit: VersionEdit = { deleted: [], added: [] };
  while (!d.done) {
    const tag = d.uvarint('tag');
    switch (tag) {
      case 1:
        edit.comparer = Buffer.from(d.lengthPrefixed('comparer name')).toString('utf8');
        break;
      case 2:
        edit.logNum = d.uvarint('log number');
        break;
      case 3:
        edit.nextFileNum = d.uvarint('next file number');
        break;
      case 4:
        edit.lastSeq = d.uvarint('last sequence');
        break;
      case 5:
        level(d);
        d.lengthPrefixed('compact pointer key');
        break;
      case 6: {
        const lv = level(d);
        edit.deleted.push({ level: lv, fileNum: d.uvarint('deleted file number') });
        break;
      }
      case 9:
        d.uvarint('previous log number');
        break;
      case 7:
      case 100:
      case 102:
      case 103:
      case 104:
        edit.added.push(decodeNewFile(d, tag));
        break;
      case 105:
      case 106:
        throw new PebbleUnsupportedError(`${d.file}: MANIFEST tag ${tag} (backing tables) needs Pebble >= 1.1, not supported`);
      case 200:
      case 201:
      case 202:
      case 203:
        throw new PebbleUnsupportedError(`${d.file}: MANIFEST tag ${tag} (column families) is not supported`);
      default:
        throw d.fail(`unknown MANIFEST tag ${tag}`);
    }
  }
  return edit;
}

function level(d: Decoder): number {
  const lv = d.uvarint('level');
  if (lv >= NUM_LEVELS) throw d.fail(`level ${lv} out of range`);
  return lv;
}

function key(d: Decoder, what: string): InternalKey {
  const k = decodeInternalKey(d.lengthPrefixed(what));
  if (!k) throw d.fail(`${what} is shorter than an internal key`);
  return k;
}

function decodeNewFile(d: Decoder, tag: number): { level: number; meta: FileMetadata } {
  const lv = level(d);
  const fileNum = d.uvarint('file number');
  if (tag === 102) d.uvarint('path id');
  const size = d.uvarint('file size');
  let smallest: InternalKey;
  let largest: InternalKey;
  if (tag === 104) {
    const marker = d.u8('bounds marker');
    let pointSmallest: InternalKey | undefined;
    let pointLargest: InternalKey | undefined;
    if (marker & 1) {
      pointSmallest = key(d, 'point smallest');
      pointLargest = key(d, 'point largest');
    }
    const rangeSmallest = key(d, 'range smallest');
    const rangeLargest = key(d, 'range largest');
    smallest = marker & 2 && pointSmallest ? pointSmallest : rangeSmallest;
    largest = marker & 4 && pointLargest ? pointLargest : rangeLargest;
  } else {
    smallest = key(d, 'smallest key');
    largest = key(d, 'largest key');
  }
  let smallestSeq = 0;
  let largestSeq = 0;
  if (tag !== 7) {
    smallestSeq = d.uvarint('smallest seqnum');
    largestSeq = d.uvarint('largest seqnum');
  }
  if (tag === 103 || tag === 104) decodeCustomFields(d);
  return { level: lv, meta: { fileNum, size, smallest, largest, smallestSeq, largestSeq } };
}

function decodeCustomFields(d: Decoder): void {
  for (;;) {
    const custom = d.uvarint('custom tag');
    if (custom === 1) return;
    if (custom === 65) throw new PebbleUnsupportedError(`${d.file}: MANIFEST custom tag 65 (path id) is not supported`);
    if (custom === 66) throw new PebbleUnsupportedError(`${d.file}: MANIFEST custom tag 66 (virtual sstable) needs Pebble >= 1.1`);
    if (custom !== 2 && custom !== 6 && (custom & 64) !== 0) {
      throw new PebbleUnsupportedError(`${d.file}: MANIFEST custom tag ${custom} must be understood and is not supported`);
    }
    d.lengthPrefixed(`custom field ${custom}`);
  }
}
