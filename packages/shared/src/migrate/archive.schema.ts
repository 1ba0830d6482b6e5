import { Type, type Static } from '@sinclair/typebox';

/**
 * Files `parleyctl` writes into its workspaces and archives and reads back in
 * a later stage (or a rerun): each is checked against its schema when read,
 * never cast. Digests are lower-case hex SHA-256.
 */

/** The name of a record file of an archive. */
export const RecordFileName = Type.Union([
  Type.Literal('credentials'),
  Type.Literal('users'),
  Type.Literal('channels'),
  Type.Literal('members'),
  Type.Literal('system_uids'),
  Type.Literal('conversations'),
  Type.Literal('messages'),
  Type.Literal('tails'),
  Type.Literal('archived'),
  Type.Literal('excluded'),
  Type.Literal('sequence_mapping'),
  Type.Literal('duplicate_chain_proof'),
]);
export type RecordFile = Static<typeof RecordFileName>;

/** The record files of an archive, in the order they are written and imported. */
export const RECORD_FILES: readonly RecordFile[] = RecordFileName.anyOf.map((l) => l.const);

/** Digest, line count and size (bytes) of one written file. */
export const FileDigest = Type.Object({ sha256: Type.String(), count: Type.Integer({ minimum: 0 }), bytes: Type.Integer({ minimum: 0 }) });
export type FileDigest = Static<typeof FileDigest>;

/** Digest of every record file, by name. */
export const FileDigests = Type.Record(RecordFileName, FileDigest);
export type FileDigests = Static<typeof FileDigests>;

/** The tool that wrote a file: a changed tool needs a new run. */
export const ToolIdentity = Type.Object({ version: Type.String(), commit: Type.String() });

/** A plugin program the plan names, copied into the archive (Parley runs none). */
export const ArtifactRecord = Type.Object({
  node_id: Type.Integer(),
  path: Type.String(),
  /** Bytes. */
  size: Type.Integer({ minimum: 0 }),
  sha256: Type.String(),
  profile: Type.String(),
  /** Its place in the archive: `plugins/node-<id>/<index>-<name>`. */
  archived_as: Type.String(),
});
export type ArtifactRecord = Static<typeof ArtifactRecord>;

const SourceDigest = Type.Object({ node_id: Type.Integer(), data_dir: Type.String(), fingerprint_sha256: Type.String() });

/** `archive_seal.json`: binds the prepare report to the records export may publish. */
export const ArchiveSeal = Type.Object({
  plan_sha256: Type.String(),
  tool: ToolIdentity,
  selection_digest: Type.String(),
  report_sha256: Type.String(),
  files: FileDigests,
  sources: Type.Array(SourceDigest),
  /** Plugin programs the plan names, checked at prepare; export copies them into the archive. */
  plugin_artifacts: Type.Array(ArtifactRecord),
});
export type ArchiveSeal = Static<typeof ArchiveSeal>;

/** Archive format identifier and version. */
export const ARCHIVE_FORMAT = 'parley-v2-archive';
export const ARCHIVE_FORMAT_VERSION = 2;

/** `manifest.json` of an archive. */
export const ArchiveManifest = Type.Object({
  format: Type.Literal(ARCHIVE_FORMAT),
  format_version: Type.Integer(),
  created_at: Type.String(),
  tool: ToolIdentity,
  plan_sha256: Type.String(),
  selection_digest: Type.String(),
  seal_sha256: Type.String(),
  prepare_report_sha256: Type.String(),
  retained_messages: Type.Integer({ minimum: 0 }),
  sources: Type.Array(SourceDigest),
  files: FileDigests,
  /** Plugin programs the plan named, copied under `plugins/` (Parley runs none; they are kept). */
  plugin_artifacts: Type.Array(ArtifactRecord),
});
export type ArchiveManifest = Static<typeof ArchiveManifest>;

/** `.parley-export-partial` in an archive being written: a rerun of the same export may take it over. */
export const ExportIdentity = Type.Object({ plan_sha256: Type.String(), seal_sha256: Type.String(), tool_commit: Type.String() });
export type ExportIdentity = Static<typeof ExportIdentity>;

/** `identity.json` of a stage workspace: a rerun of the same command may reuse it only if it was interrupted. */
export const WorkspaceIdentity = Type.Object({
  stage: Type.String(),
  plan_sha256: Type.String(),
  tool: ToolIdentity,
  /** The archive the stage reads, for stages that read one. */
  archive: Type.Optional(Type.String()),
});
export type WorkspaceIdentity = Static<typeof WorkspaceIdentity>;

/** One file of a source tree: path relative to the tree root, size in bytes and SHA-256. */
export const FileFingerprint = Type.Object({ path: Type.String(), size: Type.Integer({ minimum: 0 }), sha256: Type.String() });
export type FileFingerprint = Static<typeof FileFingerprint>;

/** `source-fingerprint.json` of a prepare workspace: every source file per shard directory. */
export const SourceFingerprints = Type.Record(Type.String(), Type.Array(FileFingerprint));
export type SourceFingerprints = Static<typeof SourceFingerprints>;
