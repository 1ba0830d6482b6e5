import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { JsonlWriter } from '../archive/jsonl.ts';
import type { FileDigests } from '@parley/shared';
import { RECORD_FILES, type RecordFile } from '../v2/records.ts';
import { sha256 } from './common.ts';

export type { FileDigests } from '@parley/shared';

/** Path of one record file inside a records directory. */
export function recordPath(dir: string, name: RecordFile): string {
  return join(dir, `${name}.jsonl`);
}

/** Opens one writer per record file in a new owner-only directory. */
export function openRecordWriters(dir: string): Record<RecordFile, JsonlWriter> {
  mkdirSync(dir, { mode: 0o700 });
  return Object.fromEntries(RECORD_FILES.map((n) => [n, new JsonlWriter(recordPath(dir, n))])) as Record<RecordFile, JsonlWriter>;
}

/** Closes every writer, their fsyncs running at once; returns their digests. */
export async function closeRecordWriters(writers: Record<RecordFile, JsonlWriter>): Promise<FileDigests> {
  const digests = await Promise.all(RECORD_FILES.map((n) => writers[n].close()));
  return Object.fromEntries(RECORD_FILES.map((n, i) => [n, digests[i]!])) as FileDigests;
}

/**
 * The selection digest: one SHA-256 over every record file's name, digest and
 * count, in file order. Prepare computes it from what it wrote; verify from
 * the archive; they must agree.
 */
export function selectionDigest(files: FileDigests): string {
  return sha256(RECORD_FILES.map((n) => `${n} ${files[n].sha256} ${files[n].count}\n`).join(''));
}
