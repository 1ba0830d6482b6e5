import type { FileDigest } from '../archive/file-digest.ts';
import type { FileDigests } from './records-dir.ts';

/** The seed's `sequence_mapping` report field: the mapping side files with their digests and line counts. */
export interface SequenceMappingReport {
  mapping: { file: string } & FileDigest;
  duplicate_chain_proof: { file: string } & FileDigest;
}

export function sequenceMappingReport(files: FileDigests): SequenceMappingReport {
  return {
    mapping: { file: 'records/sequence_mapping.jsonl', ...files.sequence_mapping },
    duplicate_chain_proof: { file: 'records/duplicate_chain_proof.jsonl', ...files.duplicate_chain_proof },
  };
}
