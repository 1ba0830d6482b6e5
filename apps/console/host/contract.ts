import type {
  AddNodeRequest,
  ChecklistDoc,
  CheckRequest,
  DbInfoReply,
  DbInfoRequest,
  MigrationState,
  PlanDetail,
  PlanRef,
  PlanSummary,
  ReportRef,
  ReportReply,
  RunRecord,
  RunRef,
  RunStatus,
  SavePlanRequest,
  SetFieldsRequest,
  SetRootRequest,
  StartRunRequest,
  TickRequest,
  ConsoleNode,
  HostError,
  HostErrorCode,
  HostInfo,
  NodeList,
  OpsGetRequest,
  OpsReply,
  RemoveNodeRequest,
  SetTokenRequest,
} from '@parley/shared';

/**
 * The one contract between the console's renderer and its host. The web
 * host (`parleyctl console`) carries it over loopback HTTP, the desktop host
 * (Electron main) over IPC; both run the same handlers (`handlers.ts`).
 * This module is type-only plus constants, so the renderer, the preload and
 * the hosts can all import it.
 */

/** Why the host refused or failed; `session_expired` is the web page's own (its cookie is no longer valid). */
export type HostFailure = HostError & { code: HostErrorCode | 'session_expired' };

/** A handler's answer: the value, or why the host refused or failed. */
export type HostResult<T> = { ok: true; value: T } | { ok: false; error: HostFailure };

/** The migration wizard's channels (host/migration/handlers.ts). */
export const MIGRATION_CHANNELS = [
  'migration:state',
  'migration:set-root',
  'migration:save-plan',
  'migration:plan',
  'migration:report',
  'migration:run-start',
  'migration:run-status',
  'migration:run-cancel',
  'migration:db-info',
  'migration:tick',
  'migration:set-fields',
  'migration:check',
] as const;
export type MigrationChannel = (typeof MIGRATION_CHANNELS)[number];

/** Every IPC channel main listens on; nothing else is registered. */
export const HOST_CHANNELS = [
  'app:info',
  'nodes:list',
  'nodes:add',
  'nodes:remove',
  'nodes:set-token',
  'ops:get',
  ...MIGRATION_CHANNELS,
] as const;
export type HostChannel = (typeof HOST_CHANNELS)[number];

/** Request and answer types by channel. */
export interface HostMessages {
  'app:info': { req: undefined; res: HostInfo };
  'nodes:list': { req: undefined; res: NodeList };
  'nodes:add': { req: AddNodeRequest; res: ConsoleNode };
  'nodes:remove': { req: RemoveNodeRequest; res: NodeList };
  'nodes:set-token': { req: SetTokenRequest; res: ConsoleNode };
  'ops:get': { req: OpsGetRequest; res: OpsReply };
  'migration:state': { req: undefined; res: MigrationState };
  'migration:set-root': { req: SetRootRequest; res: MigrationState };
  'migration:save-plan': { req: SavePlanRequest; res: PlanSummary };
  'migration:plan': { req: PlanRef; res: PlanDetail };
  'migration:report': { req: ReportRef; res: ReportReply };
  'migration:run-start': { req: StartRunRequest; res: RunRecord };
  'migration:run-status': { req: RunRef; res: RunStatus };
  'migration:run-cancel': { req: RunRef; res: RunRecord };
  'migration:db-info': { req: DbInfoRequest; res: DbInfoReply };
  'migration:tick': { req: TickRequest; res: ChecklistDoc };
  'migration:set-fields': { req: SetFieldsRequest; res: ChecklistDoc };
  'migration:check': { req: CheckRequest; res: ChecklistDoc };
}

/** The handlers: each takes an untrusted payload and checks it before acting. */
export type HostHandlers = { [C in HostChannel]: (payload: unknown) => Promise<HostResult<HostMessages[C]['res']>> };
export type MigrationHandlers = Pick<HostHandlers, MigrationChannel>;

/** The object the preload exposes as `window.wkDesktop`, and the only thing it exposes. */
export interface WkDesktop {
  app: { info(): Promise<HostResult<HostInfo>> };
  nodes: {
    list(): Promise<HostResult<NodeList>>;
    add(req: AddNodeRequest): Promise<HostResult<ConsoleNode>>;
    remove(req: RemoveNodeRequest): Promise<HostResult<NodeList>>;
    setToken(req: SetTokenRequest): Promise<HostResult<ConsoleNode>>;
  };
  ops: { get(req: OpsGetRequest): Promise<HostResult<OpsReply>> };
  migration: {
    state(): Promise<HostResult<MigrationState>>;
    setRoot(req: SetRootRequest): Promise<HostResult<MigrationState>>;
    savePlan(req: SavePlanRequest): Promise<HostResult<PlanSummary>>;
    plan(req: PlanRef): Promise<HostResult<PlanDetail>>;
    report(req: ReportRef): Promise<HostResult<ReportReply>>;
    runStart(req: StartRunRequest): Promise<HostResult<RunRecord>>;
    runStatus(req: RunRef): Promise<HostResult<RunStatus>>;
    runCancel(req: RunRef): Promise<HostResult<RunRecord>>;
    dbInfo(req: DbInfoRequest): Promise<HostResult<DbInfoReply>>;
    tick(req: TickRequest): Promise<HostResult<ChecklistDoc>>;
    setFields(req: SetFieldsRequest): Promise<HostResult<ChecklistDoc>>;
    check(req: CheckRequest): Promise<HostResult<ChecklistDoc>>;
  };
}
