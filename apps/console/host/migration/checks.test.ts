import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChecklistDoc, Plan } from '@parley/shared';
import { startRealNode, type RealNode } from '../../test/real-node.ts';
import { onePlan, PARLEYCTL } from '../../test/migration-fixtures.ts';
import { createHostHandlers } from '../handlers.ts';
import { NodeRegistry } from '../node-registry.ts';
import { checkReadyz, checkToken, gatewayProblem, type CheckDeps } from './checks.ts';
import { pickCredential } from './token-check.ts';

const TOKEN = 'b7c0ffee00112233445566778899aabb';

/** An archive's records folder with these credential and channel lines (the fields parleyctl writes). */
function archive(dir: string, creds: object[], channels: object[] = []): string {
  mkdirSync(join(dir, 'records'), { recursive: true });
  writeFileSync(join(dir, 'records', 'credentials.jsonl'), creds.map((c) => JSON.stringify(c)).join('\n'));
  writeFileSync(join(dir, 'records', 'channels.jsonl'), channels.map((c) => JSON.stringify(c)).join('\n'));
  return dir;
}

describe('acceptance live checks against a real node', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'parley-checks-'));
  let node: RealNode;
  let deps: CheckDeps;
  let ws = '';
  const plan: Plan = onePlan(tmp, join(tmp, 'src'));
  const doc = (): ChecklistDoc => ({
    version: 1,
    items: {},
    checks: {},
    fields: { nodes: [{ node_id: 7, api_url: node.api, gateway: ws }] },
  });

  beforeAll(async () => {
    node = await startRealNode();
    ws = `ws://127.0.0.1:${node.server.addresses.ws.port}`;
    const res = await fetch(`${node.api}/user/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ uid: 'alice', token: TOKEN, device_flag: 1, device_level: 1 }),
    });
    expect(res.status).toBe(200);
    const registry = new NodeRegistry();
    const handlers = createHostHandlers({ registry, fetch: (url, init) => fetch(url, init), platform: 'web', version: '0' });
    deps = { tool: PARLEYCTL, registry, opsGet: handlers['ops:get'], socket: (url) => new WebSocket(url) };
  });
  afterAll(async () => {
    await node.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('proves an original token connects and a wrong one is refused, without the token in the evidence', async () => {
    const a = archive(join(tmp, 'a1'), [{ v2_device_id: '10', uid: 'alice', token: TOKEN, device_flag: 1 }]);
    const r = await checkToken(deps, plan, doc(), a);
    expect(r.ok, r.evidence.join('\n')).toBe(true);
    expect(r.evidence).toEqual([
      `node 7 (${ws}): uid alice (device_flag 1) connected with its original token`,
      expect.stringMatching(new RegExp(`^node 7 \\(${ws}\\): a wrong token was refused \\(`)),
    ]);
    expect(JSON.stringify(r)).not.toContain(TOKEN);
  });

  it('fails when the archived token is not the one the target holds', async () => {
    const a = archive(join(tmp, 'a2'), [{ v2_device_id: '10', uid: 'alice', token: 'not-the-token', device_flag: 1 }]);
    const r = await checkToken(deps, plan, doc(), a);
    expect(r.ok).toBe(false);
    expect(r.evidence[0]).toMatch(/was refused with its original token/);
  });

  it('takes the device the target keeps (smallest v2 device id of a uid and flag), never a banned user’s', async () => {
    const a = archive(
      join(tmp, 'a3'),
      [
        { v2_device_id: '5', uid: 'mallory', token: 'm', device_flag: 1 },
        { v2_device_id: '30', uid: 'bob', token: 'newer', device_flag: 0 },
        { v2_device_id: '20', uid: 'bob', token: 'kept', device_flag: 0 },
        { v2_device_id: '9', uid: 'carol', token: '', device_flag: 1 },
      ],
      [{ channel_id: 'mallory', channel_type: 1, ban: true }],
    );
    expect(await pickCredential(a)).toEqual({ uid: 'bob', token: 'kept', device_flag: 0 });
  });

  it('checks readiness through the console’s ops proxy, adding the node to the console', async () => {
    const r = await checkReadyz(deps, plan, doc());
    expect(r).toMatchObject({ ok: true, evidence: [`node 7 (${node.api}): /readyz 200`] });
    expect(deps.registry.list().map((n) => n.url)).toEqual([node.api]);
    const missing = await checkReadyz(deps, plan, { version: 1, items: {}, checks: {}, fields: {} });
    expect(missing).toMatchObject({ ok: false, evidence: ['node 7: no API address given'] });
  });

  it('gives a credential only to a gateway on the node’s own API host', () => {
    expect(gatewayProblem({ api_url: 'http://10.0.0.1:5001', gateway: 'ws://10.0.0.1:5200' })).toBeUndefined();
    expect(gatewayProblem({ api_url: 'http://10.0.0.1:5001', gateway: 'ws://evil.example:5200' })).toMatch(/not the API host/);
    expect(gatewayProblem({ api_url: 'http://10.0.0.1:5001', gateway: 'http://10.0.0.1:5200' })).toMatch(/ws:\/\//);
    expect(gatewayProblem({ gateway: 'ws://10.0.0.1:5200' })).toMatch(/API address first/);
  });
});
