import { Type, type Static } from '@sinclair/typebox';

/**
 * The console's migration wizard contract: what the page asks of its host
 * (`parleyctl console` over loopback HTTP, Electron main over IPC), and the
 * files the host keeps under the operator's migration root. The host runs
 * `parleyctl` for every stage and probe; nothing here reimplements one.
 *
 * Layout of a migration root:
 *   migration.json          the root's identity (format, version, created_at)
 *   preflight.json          the preflight checklist (a ChecklistDoc)
 *   plan-<n>/plan.json      a saved plan; never changed once saved
 *   plan-<n>/<workspace>    the stages' workspaces and the archive (ws-prepare, archive, ws-import-1, …)
 *   plan-<n>/reports/       every run: <stage>-<time>.json (the stage's report as printed) and .run.json
 *   plan-<n>/checklist.json the acceptance checklist (a ChecklistDoc)
 */

/** The stages the wizard runs, in their order. */
export const MIGRATION_STAGES = ['diagnose', 'prepare', 'export', 'import', 'verify', 'export-map'] as const;
export type MigrationStage = (typeof MIGRATION_STAGES)[number];

/** The report status each stage succeeds with (exit 0). */
export const STAGE_SUCCESS: Readonly<Record<MigrationStage, string>> = {
  diagnose: 'diagnosed',
  prepare: 'prepared',
  export: 'exported',
  import: 'imported',
  verify: 'offline_verified',
  'export-map': 'mapped',
};

/** Stages that take `--archive`. */
export const STAGES_WITH_ARCHIVE: readonly MigrationStage[] = ['export', 'import', 'verify', 'export-map'];

/** `plan-<n>`: a saved plan's folder in the root. */
export const PLAN_ID_PATTERN = '^plan-[1-9][0-9]{0,5}$';
/** A workspace or archive folder name inside a plan's folder. */
export const DIR_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$';

const PlanId = Type.String({ pattern: PLAN_ID_PATTERN });
const AbsPath = Type.String({ minLength: 2, maxLength: 4096, pattern: '^/' });
const Stage = Type.Union(MIGRATION_STAGES.map((s) => Type.Literal(s)));
const closed = { additionalProperties: false } as const;

/** The preflight items (seed 001, preconditions) the operator ticks. */
export const PREFLIGHT_MANUAL_ITEMS = [
  'writers_stopped',
  'auto_restart_off',
  'v3_new_empty',
  'baseline',
  'space_sized',
  'os_locking',
  'plugins_match',
] as const;

/** The acceptance items (seed 001, deployment and acceptance steps) the operator ticks. */
export const ACCEPTANCE_MANUAL_ITEMS = [
  'copy',
  'config',
  'data_agrees',
  'new_sequences',
  'membership',
  'query_restart',
  'three_nodes',
  'renumbering',
  'cmd_recovery',
  'cutover',
] as const;

/** Live checks the host runs and records: `sources` and `tool` (preflight), `readyz`, `config`, `token` (acceptance). */
export const CHECK_KINDS = ['tool', 'sources', 'readyz', 'config', 'token'] as const;
export type CheckKind = (typeof CHECK_KINDS)[number];

/** Which checklist: the root's preflight, or a plan's acceptance. */
const Scope = Type.Union([Type.Literal('preflight'), PlanId]);

export const SetRootRequest = Type.Object({ path: AbsPath }, closed);
export type SetRootRequest = Static<typeof SetRootRequest>;

export const SavePlanRequest = Type.Object(
  { plan: Type.Unknown({ description: 'the plan document, checked with planIssues' }), based_on: Type.Optional(PlanId) },
  closed,
);
export type SavePlanRequest = Static<typeof SavePlanRequest>;

export const PlanRef = Type.Object({ plan_id: PlanId }, closed);
export type PlanRef = Static<typeof PlanRef>;

export const ReportRef = Type.Object({ plan_id: PlanId, file: Type.String({ pattern: '^[a-z-]+-[0-9TZ]+(-[0-9]+)?\\.json$' }) }, closed);
export type ReportRef = Static<typeof ReportRef>;

export const StartRunRequest = Type.Object(
  {
    plan_id: PlanId,
    stage: Stage,
    workspace: AbsPath,
    archive: Type.Optional(AbsPath),
  },
  closed,
);
export type StartRunRequest = Static<typeof StartRunRequest>;

export const RunRef = Type.Object(
  { run_id: Type.String({ pattern: '^[0-9a-z-]{1,64}$' }), since: Type.Optional(Type.Integer({ minimum: 0 })) },
  closed,
);
export type RunRef = Static<typeof RunRef>;

export const DbInfoRequest = Type.Object({ plan_id: PlanId, dir: AbsPath }, closed);
export type DbInfoRequest = Static<typeof DbInfoRequest>;

export const TickRequest = Type.Object(
  {
    scope: Scope,
    item: Type.String({ pattern: '^[a-z0-9_]{1,32}$' }),
    done: Type.Boolean(),
    by: Type.String({ minLength: 1, maxLength: 64 }),
    note: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  closed,
);
export type TickRequest = Static<typeof TickRequest>;

/** One target node as the acceptance checklist knows it: its API base URL (a console node) and gateway WebSocket URL. */
export const AcceptanceNode = Type.Object(
  {
    node_id: Type.Integer({ minimum: 1, maximum: 1023 }),
    api_url: Type.Optional(Type.String({ maxLength: 2048 })),
    gateway: Type.Optional(Type.String({ maxLength: 2048, pattern: '^wss?://' })),
  },
  closed,
);
export type AcceptanceNode = Static<typeof AcceptanceNode>;

export const ChecklistFields = Type.Object(
  {
    /** Preflight: the target servers' build commit, as their `version --output json` prints it. */
    target_commit: Type.Optional(Type.String({ maxLength: 64 })),
    /** Preflight: writes resumed on v2 after this cold backup (seed rule 7): rehearsal only. */
    rehearsal_only: Type.Optional(Type.Boolean()),
    /** Acceptance: the target nodes' addresses. */
    nodes: Type.Optional(Type.Array(AcceptanceNode, { maxItems: 64 })),
    /** Acceptance: has v3 received production writes (picks the rollback row)? */
    production_writes: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  },
  closed,
);
export type ChecklistFields = Static<typeof ChecklistFields>;

export const SetFieldsRequest = Type.Object({ scope: Scope, fields: ChecklistFields }, closed);
export type SetFieldsRequest = Static<typeof SetFieldsRequest>;

export const CheckRequest = Type.Object(
  {
    scope: Scope,
    kind: Type.Union(CHECK_KINDS.map((k) => Type.Literal(k))),
    /** `sources` (preflight): the saved plan whose sources are checked. */
    plan_id: Type.Optional(PlanId),
  },
  closed,
);
export type CheckRequest = Static<typeof CheckRequest>;

/** An item ticked (or unticked) by a person. */
export const ItemState = Type.Object({
  done: Type.Boolean(),
  by: Type.String(),
  at: Type.String({ description: 'ISO 8601, the host clock' }),
  note: Type.Optional(Type.String()),
});
export type ItemState = Static<typeof ItemState>;

/** A live check's last result, recorded by the host. */
export const CheckResult = Type.Object({
  ok: Type.Boolean(),
  at: Type.String(),
  evidence: Type.Array(Type.String(), { description: 'one line per thing checked; never a token' }),
});
export type CheckResult = Static<typeof CheckResult>;

/** `preflight.json` and `checklist.json`. */
export const ChecklistDoc = Type.Object({
  version: Type.Literal(1),
  items: Type.Record(Type.String(), ItemState),
  checks: Type.Record(Type.String(), CheckResult),
  fields: ChecklistFields,
});
export type ChecklistDoc = Static<typeof ChecklistDoc>;

/** What every `parleyctl migrate` report carries (stage-specific members are left open). */
export const StageReportEnvelope = Type.Object(
  {
    stage: Type.String(),
    status: Type.String(),
    tool: Type.Object({ name: Type.String(), version: Type.String(), commit: Type.String() }, { additionalProperties: true }),
    errors: Type.Array(Type.String()),
    started_at: Type.String(),
    duration_ms: Type.Number(),
  },
  { additionalProperties: true },
);
export type StageReportEnvelope = Static<typeof StageReportEnvelope>;

/** `parleyctl version --output json`. */
export const ToolVersion = Type.Object(
  { name: Type.String(), version: Type.String(), commit: Type.String(), build_time: Type.String(), build_origin: Type.String() },
  { additionalProperties: true },
);
export type ToolVersion = Static<typeof ToolVersion>;

/** `parleyctl db info <dir>`: its kind and the rest as printed. */
export const DbInfoReply = Type.Object({ kind: Type.String(), dir: Type.String() }, { additionalProperties: true });
export type DbInfoReply = Static<typeof DbInfoReply>;

export const RUN_STATES = ['running', 'succeeded', 'failed', 'cancelled'] as const;
export type RunStateName = (typeof RUN_STATES)[number];

/** One stage run: live while running, then kept as `reports/<stage>-<time>.run.json`. */
export const RunRecord = Type.Object({
  id: Type.String(),
  plan_id: Type.String(),
  stage: Stage,
  workspace: Type.String(),
  archive: Type.Optional(Type.String()),
  /** The command line as run (the tool's own arguments; nothing secret is ever passed). */
  argv: Type.Array(Type.String()),
  state: Type.Union(RUN_STATES.map((s) => Type.Literal(s))),
  started_at: Type.String(),
  ended_at: Type.Optional(Type.String()),
  exit_code: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  signal: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  /** `reports/<stage>-<time>.json` when the stage printed a report. */
  report_file: Type.Optional(Type.String()),
  report_status: Type.Optional(Type.String()),
  /** `reports/<stage>-<time>.log`: the run's whole stderr. */
  log_file: Type.Optional(Type.String()),
  /** Why the run has no usable report (the tool could not start, stdout was not a report, …). */
  error: Type.Optional(Type.String()),
  /** Parsed from the last progress line that says `n/m`. */
  progress: Type.Optional(Type.Object({ done: Type.Integer(), total: Type.Integer() })),
  last_line: Type.Optional(Type.String()),
  line_count: Type.Integer(),
});
export type RunRecord = Static<typeof RunRecord>;

/** A run with the stderr lines from `since` on. */
export const RunStatus = Type.Intersect([RunRecord, Type.Object({ lines: Type.Array(Type.String()), next: Type.Integer() })]);
export type RunStatus = Static<typeof RunStatus>;

/** Where the wizard proposes the next run of each stage (inside the plan's folder). */
export const StageProposal = Type.Object({ workspace: Type.String(), archive: Type.Optional(Type.String()) });
export type StageProposal = Static<typeof StageProposal>;

export const PlanSummary = Type.Object({
  id: Type.String(),
  dir: Type.String(),
  /** SHA-256 of plan.json as saved (what `sha256sum plan.json` prints). */
  sha256: Type.String(),
  /** SHA-256 of the plan's canonical JSON: the reports' `plan_sha256`. */
  canonical_sha256: Type.String(),
  saved_at: Type.String(),
  based_on: Type.Optional(Type.String()),
  cluster_id: Type.String(),
});
export type PlanSummary = Static<typeof PlanSummary>;

export const PlanDetail = Type.Object({
  summary: PlanSummary,
  plan: Type.Unknown(),
  runs: Type.Array(RunRecord, { description: 'oldest first' }),
  proposals: Type.Record(Type.String(), StageProposal),
  checklist: ChecklistDoc,
});
export type PlanDetail = Static<typeof PlanDetail>;

export const MigrationState = Type.Object({
  root: Type.Union([Type.String(), Type.Null()]),
  /** Set with `parleyctl console --migration-root`: the page cannot change it. */
  root_locked: Type.Boolean(),
  plans: Type.Array(PlanSummary),
  preflight: Type.Union([ChecklistDoc, Type.Null()]),
  active_runs: Type.Array(RunRecord),
});
export type MigrationState = Static<typeof MigrationState>;

/** A report as the stage printed it, with its run. */
export const ReportReply = Type.Object({
  run: Type.Union([RunRecord, Type.Null()]),
  report: Type.Unknown(),
  /** The run's stderr (its last lines), kept beside the report. */
  log: Type.Array(Type.String()),
});
export type ReportReply = Static<typeof ReportReply>;
