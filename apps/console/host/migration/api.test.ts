import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MigrationState, PlanDetail, PlanSummary, RunStatus } from '@parley/shared';
import { copyFixture, hasV2Fixture, onePlan, PARLEYCTL } from '../../test/migration-fixtures.ts';
import { createHostHandlers } from '../handlers.ts';
import { NodeRegistry } from '../node-registry.ts';
import { startConsoleServer, type ConsoleServer } from '../web-server.ts';
import { StageRunner } from './runner.ts';

/** The stage API over real loopback HTTP, with real `parleyctl` stages on a copied fixture. */
describe.runIf(hasV2Fixture('basic-closed'))('the wizard’s stage API (parleyctl console, real HTTP)', () => {
  const { tmp, source } = copyFixture('basic-closed');
  const root = join(tmp, 'migration');
  const runner = new StageRunner(PARLEYCTL, { interruptMs: 2_000, terminateMs: 2_000 });
  let server: ConsoleServer;
  let cookie = '';
  let plan: PlanSummary;

  const api = async (method: string, path: string, body?: unknown, headers: Record<string, string> = { cookie }) => {
    const res = await fetch(new URL(path, server.origin), {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as any };
  };
  const finished = async (id: string): Promise<RunStatus> => {
    for (const end = Date.now() + 60_000; Date.now() < end;) {
      const r = await api('GET', `/api/migration/runs/${id}`);
      if (r.json.state !== 'running') return r.json as RunStatus;
      await new Promise((res) => setTimeout(res, 100));
    }
    throw new Error(`run ${id} did not finish`);
  };

  beforeAll(async () => {
    const handlers = createHostHandlers({
      registry: new NodeRegistry(),
      fetch: (url, init) => fetch(url, init),
      platform: 'web',
      version: '0.1.0',
      migration: { tool: PARLEYCTL, runner, root },
    });
    server = await startConsoleServer({ host: '127.0.0.1', port: 0, staticDir: tmp, handlers });
    const launch = await fetch(server.launchUrl, { redirect: 'manual' });
    cookie = launch.headers.get('set-cookie')!.split(';')[0]!;
    const saved = await api('POST', '/api/migration/plans', { plan: onePlan(tmp, source) });
    expect(saved.status).toBe(201);
    plan = saved.json;
  });
  afterAll(async () => {
    await runner.stopAll();
    await server.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('refuses every wizard route without the console’s session, and mutations from another origin', async () => {
    const start = { stage: 'prepare', workspace: join(plan.dir, 'ws-prepare') };
    for (const [method, path, body] of [
      ['GET', '/api/migration', undefined],
      ['GET', `/api/migration/plans/${plan.id}`, undefined],
      ['POST', `/api/migration/plans/${plan.id}/runs`, start],
      ['POST', '/api/migration/plans', { plan: onePlan(tmp, source) }],
      ['PUT', '/api/migration/checklists/preflight/items/writers_stopped', { done: true, by: 'x' }],
    ] as const) {
      const none = await api(method, path, body, {});
      expect(none.status, `${method} ${path}`).toBe(401);
      expect(none.json.code).toBe('session_expired');
      const forged = await api(method, path, body, { cookie: `${cookie.split('=')[0]}=forged` });
      expect(forged.status).toBe(401);
    }
    const cross = await api('POST', `/api/migration/plans/${plan.id}/runs`, start, { cookie, origin: 'http://evil.example' });
    expect(cross.status).toBe(403);
    expect(existsSync(join(plan.dir, 'ws-prepare'))).toBe(false);
    expect(existsSync(join(plan.dir, 'plan-2'))).toBe(false);
  });

  it('refuses stage paths outside the plan’s folder, and probes outside the plan’s directories, before running anything', async () => {
    mkdirSync(join(tmp, 'elsewhere'));
    symlinkSync(join(tmp, 'elsewhere'), join(plan.dir, 'ws-link'));
    const bad: Array<[string, Record<string, unknown>]> = [
      ['outside the root', { stage: 'prepare', workspace: join(tmp, 'ws-outside') }],
      ['the root itself', { stage: 'prepare', workspace: root }],
      ['a traversal', { stage: 'prepare', workspace: `${plan.dir}/../plan-9` }],
      ['a nested path', { stage: 'prepare', workspace: join(plan.dir, 'a', 'b') }],
      ['the plan file', { stage: 'prepare', workspace: join(plan.dir, 'plan.json') }],
      ['the reports folder', { stage: 'prepare', workspace: join(plan.dir, 'reports') }],
      ['a symlink out', { stage: 'prepare', workspace: join(plan.dir, 'ws-link') }],
      ['a relative path', { stage: 'prepare', workspace: 'ws-prepare' }],
      ['an archive outside', { stage: 'import', workspace: join(plan.dir, 'ws-import-1'), archive: '/tmp' }],
      ['a source directory', { stage: 'import', workspace: join(plan.dir, 'ws-import-1'), archive: source }],
    ];
    for (const [what, body] of bad) {
      const r = await api('POST', `/api/migration/plans/${plan.id}/runs`, body);
      expect([400, 403], `${what}: ${JSON.stringify(r.json)}`).toContain(r.status);
      expect(r.json.code, what).toMatch(/^(path_not_allowed|invalid_request)$/);
    }
    expect((await api('POST', `/api/migration/plans/${plan.id}/runs`, bad[0]![1])).json.code).toBe('path_not_allowed');
    expect(existsSync(join(tmp, 'ws-outside'))).toBe(false);
    expect(runner.active()).toEqual([]);
    for (const dir of ['/etc', tmp, `${source}/..`, join(source, 'db')]) {
      const r = await api('POST', `/api/migration/plans/${plan.id}/db-info`, { dir });
      expect(r.status, dir).toBe(403);
      expect(r.json.code).toBe('path_not_allowed');
    }
    expect((await api('POST', `/api/migration/plans/${plan.id}/db-info`, { dir: source })).json.kind).toBe('v2_data_dir');
    // A plan id that is not a plan folder of the root.
    expect((await api('GET', '/api/migration/plans/..%2Fetc')).status).toBe(400);
  });

  it('runs a stage as parleyctl, one at a time per plan, streams its progress lines and keeps its report', async () => {
    const detail: PlanDetail = (await api('GET', `/api/migration/plans/${plan.id}`)).json;
    const started = await api('POST', `/api/migration/plans/${plan.id}/runs`, {
      stage: 'prepare',
      workspace: detail.proposals.prepare!.workspace,
    });
    expect(started.status).toBe(200);
    expect(started.json.argv.slice(0, 3)).toEqual(['parleyctl', 'migrate', 'prepare']);
    const second = await api('POST', `/api/migration/plans/${plan.id}/runs`, {
      stage: 'diagnose',
      workspace: detail.proposals.diagnose!.workspace,
    });
    expect(second.status).toBe(409);
    expect(second.json.code).toBe('busy');
    const done = await finished(started.json.id);
    expect(done).toMatchObject({ state: 'succeeded', exit_code: 0, report_status: 'prepared', progress: { done: 8, total: 8 } });
    expect(done.lines.some((l) => /prepare: node 1 shard 8\/8/.test(l))).toBe(true);
    const report = await api('GET', `/api/migration/plans/${plan.id}/reports/${done.report_file}`);
    expect(report.json.report).toMatchObject({ stage: 'prepare', status: 'prepared', plan_sha256: plan.canonical_sha256 });
    expect(report.json.log.length).toBe(done.line_count);
    // saved as parleyctl printed it
    expect(JSON.parse(readFileSync(join(plan.dir, 'reports', done.report_file!), 'utf8'))).toEqual(report.json.report);
    const after: PlanDetail = (await api('GET', `/api/migration/plans/${plan.id}`)).json;
    expect(after.runs.map((r) => [r.stage, r.state])).toEqual([['prepare', 'succeeded']]);
    expect(after.proposals.prepare!.workspace).toBe(join(plan.dir, 'ws-prepare-2'));
    expect(after.proposals.export).toEqual({ workspace: join(plan.dir, 'ws-prepare'), archive: join(plan.dir, 'archive') });
  }, 90_000);

  it('cancels a run (SIGINT); the interrupted workspace is proposed again and the stage reruns in it', async () => {
    const saved = await api('POST', '/api/migration/plans', {
      plan: onePlan(tmp, source, join(tmp, 'targets', 'other')),
      based_on: plan.id,
    });
    const id = saved.json.id as string;
    const detail: PlanDetail = (await api('GET', `/api/migration/plans/${id}`)).json;
    const ws = detail.proposals.prepare!.workspace;
    const run = (await api('POST', `/api/migration/plans/${id}/runs`, { stage: 'prepare', workspace: ws })).json;
    const cancelled = await api('POST', `/api/migration/runs/${run.id}/cancel`, {});
    expect(cancelled.status).toBe(200);
    const end = await finished(run.id);
    expect(end.state).toBe('cancelled');
    expect(end.report_file).toBeUndefined();
    const again: PlanDetail = (await api('GET', `/api/migration/plans/${id}`)).json;
    expect(again.runs.at(-1)!.state).toBe('cancelled');
    // Whether or not the tool had made its workspace yet, the next prepare goes where it may.
    expect(again.proposals.prepare!.workspace).toBe(existsSync(ws) ? ws : join(saved.json.dir, 'ws-prepare'));
    const rerun = (
      await api('POST', `/api/migration/plans/${id}/runs`, { stage: 'prepare', workspace: again.proposals.prepare!.workspace })
    ).json;
    expect((await finished(rerun.id)).state).toBe('succeeded');
  }, 90_000);

  it('keeps the checklists in the root: ticks with a name and the host’s time, unknown items refused', async () => {
    const tick = await api('PUT', '/api/migration/checklists/preflight/items/writers_stopped', {
      done: true,
      by: ' Ops Lead ',
      note: 'drained',
    });
    expect(tick.status).toBe(200);
    expect(tick.json.items.writers_stopped).toMatchObject({ done: true, by: 'Ops Lead', note: 'drained' });
    expect(Date.parse(tick.json.items.writers_stopped.at)).toBeGreaterThan(Date.now() - 60_000);
    expect((await api('PUT', '/api/migration/checklists/preflight/items/cutover', { done: true, by: 'x' })).status).toBe(400);
    expect((await api('PUT', `/api/migration/checklists/${plan.id}/items/copy`, { done: true, by: '' })).status).toBe(400);
    const fields = await api('PUT', `/api/migration/checklists/${plan.id}/fields`, { nodes: [{ node_id: 9 }] });
    expect(fields.status).toBe(400);
    const state: MigrationState = (await api('GET', '/api/migration')).json;
    expect(state.preflight!.items.writers_stopped!.done).toBe(true);
    expect(JSON.parse(readFileSync(join(root, 'preflight.json'), 'utf8')).items.writers_stopped.by).toBe('Ops Lead');
    const sources = await api('POST', '/api/migration/checklists/preflight/checks/sources', { plan_id: plan.id });
    expect(sources.json.checks.sources).toMatchObject({ ok: true });
    expect(sources.json.checks.sources.evidence[0]).toMatch(/8 shards, Pebble format 14, 8 LOCK files, none held/);
  }, 30_000);

  it('refuses an invalid plan with its first problem, and a change of the root fixed at launch', async () => {
    const bad = onePlan(tmp, source);
    bad.target.replicas = 3;
    const r = await api('POST', '/api/migration/plans', { plan: bad });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/plan\.target\.replicas: 3 exceeds the target node count 1/);
    expect((await api('PUT', '/api/migration/root', { path: tmp })).status).toBe(400);
  });
});
