import { Value } from '@sinclair/typebox/value';
import { DbInfoReply, ToolVersion, type ChecklistDoc, type CheckResult, type Plan } from '@parley/shared';
import type { HostHandlers } from '../contract.ts';
import { normaliseNodeUrl, type NodeRegistry } from '../node-registry.ts';
import { pickCredential, tryConnect, wrongToken, type SocketFactory } from './token-check.ts';
import { runProbe, type ToolCommand } from './tool.ts';

/**
 * The live checks of the preflight and acceptance checklists. Each returns
 * evidence lines for the record; none ever writes a token or key into them.
 * Probes of files are `parleyctl` commands; node checks go through the
 * console's own ops proxy (`ops:get`), so they obey its allowlist.
 */
export interface CheckDeps {
  tool: ToolCommand;
  registry: NodeRegistry;
  opsGet: HostHandlers['ops:get'];
  /** Opens gateway WebSockets for the token check; absent: the check says it cannot run here. */
  socket?: SocketFactory;
}

/** The highest Pebble format major version the seed's baseline tool reads. */
export const MAX_SOURCE_FORMAT = 14;

const result = (ok: boolean, evidence: string[]): CheckResult => ({ ok, at: new Date().toISOString(), evidence });

/** `parleyctl version --output json`, and whether the target servers' commit (as recorded) is the tool's. */
export async function checkTool(deps: CheckDeps, doc: ChecklistDoc): Promise<{ check: CheckResult; version?: ToolVersion }> {
  const r = await runProbe(deps.tool, ['version', '--output', 'json']);
  let v: unknown;
  try {
    v = JSON.parse(r.stdout);
  } catch {
    v = undefined;
  }
  if (r.code !== 0 || !Value.Check(ToolVersion, v))
    return { check: result(false, [`parleyctl version failed: ${r.failure ?? r.stderr.trim().slice(0, 300)}`]) };
  const evidence = [`parleyctl ${v.version}, commit ${v.commit}, ${v.build_origin}, built ${v.build_time}`];
  const target = doc.fields.target_commit?.trim().toLowerCase() ?? '';
  let ok = false;
  if (target === '') evidence.push("the target servers' build commit is not recorded yet");
  else if (target.length >= 7 && v.commit.toLowerCase().startsWith(target)) {
    ok = true;
    evidence.push(`the target servers' commit ${target} is the tool's: one build`);
  } else evidence.push(`the target servers' commit ${target} is not the tool's ${v.commit}: tool and servers must come from one build`);
  return { check: result(ok, evidence), version: v };
}

/** `parleyctl db info` of every source: a v2 data dir with the planned shards, a readable format, no LOCK held. */
export async function checkSources(deps: CheckDeps, plan: Plan): Promise<CheckResult> {
  const evidence: string[] = [];
  let ok = true;
  for (const s of plan.sources) {
    const r = await runProbe(deps.tool, ['db', 'info', s.data_dir]);
    let info: unknown;
    try {
      info = JSON.parse(r.stdout);
    } catch {
      info = undefined;
    }
    const at = `source node ${s.node_id} (${s.data_dir})`;
    if (!Value.Check(DbInfoReply, info)) {
      ok = false;
      evidence.push(`${at}: db info failed: ${r.failure ?? r.stderr.trim().slice(0, 300)}`);
      continue;
    }
    const d = info as DbInfoReply & Record<string, unknown>;
    if (d.kind !== 'v2_data_dir') {
      ok = false;
      evidence.push(`${at}: not a v2 data dir (${d.kind}${typeof d.reason === 'string' ? `: ${d.reason}` : ''})`);
      continue;
    }
    const shards = (d.shards ?? []) as Array<{ shard: string; format_major_version: number }>;
    const formats = [...new Set(shards.map((x) => x.format_major_version))].sort((a, b) => a - b);
    const locks = d.locks as { checked: number; held: Array<{ file: string; holder: string }> } | undefined;
    const problems: string[] = [];
    if (shards.length !== s.shard_count) problems.push(`${shards.length} shards, the plan says ${s.shard_count}`);
    if (formats.some((f) => f > MAX_SOURCE_FORMAT)) problems.push(`Pebble format ${formats.join(', ')} above ${MAX_SOURCE_FORMAT}`);
    if (!locks) problems.push('this parleyctl does not report LOCK holders');
    for (const h of locks?.held ?? []) problems.push(`${h.file} is held by ${h.holder}: stop the v2 node`);
    if (problems.length > 0) {
      ok = false;
      evidence.push(`${at}: ${problems.join('; ')}`);
    } else {
      evidence.push(`${at}: ${shards.length} shards, Pebble format ${formats.join(', ')}, ${locks!.checked} LOCK files, none held`);
    }
  }
  return result(ok, evidence);
}

/** The console node of a target's API URL, added to the node list when missing. */
export function consoleNode(registry: NodeRegistry, url: string, nodeId: number): { id: string } | { error: string } {
  const n = normaliseNodeUrl(url);
  if ('error' in n) return n;
  if (registry.get(n.id)) return { id: n.id };
  const added = registry.add(url, `target ${nodeId}`);
  return 'code' in added ? { error: added.message } : { id: added.id };
}

/** Each target node's API URL, or why it has none. */
function targets(plan: Plan, doc: ChecklistDoc, deps: CheckDeps): Array<{ node_id: number; id?: string; why?: string }> {
  return plan.target.nodes.map((n) => {
    const url = doc.fields.nodes?.find((x) => x.node_id === n.node_id)?.api_url;
    if (!url) return { node_id: n.node_id, why: 'no API address given' };
    const c = consoleNode(deps.registry, url, n.node_id);
    return 'error' in c ? { node_id: n.node_id, why: c.error } : { node_id: n.node_id, id: c.id };
  });
}

/** `/readyz` of every target node through the console's ops proxy: ready means 200. */
export async function checkReadyz(deps: CheckDeps, plan: Plan, doc: ChecklistDoc): Promise<CheckResult> {
  const evidence: string[] = [];
  let ok = true;
  for (const t of targets(plan, doc, deps)) {
    if (!t.id) {
      ok = false;
      evidence.push(`node ${t.node_id}: ${t.why}`);
      continue;
    }
    const r = await deps.opsGet({ node: t.id, path: '/readyz' });
    const url = deps.registry.get(t.id)?.url;
    if (!r.ok) {
      ok = false;
      evidence.push(`node ${t.node_id} (${url}): ${r.error.error}`);
    } else if (r.value.status !== 200) {
      ok = false;
      evidence.push(`node ${t.node_id} (${url}): /readyz ${r.value.status} ${r.value.body.slice(0, 200)}`);
    } else evidence.push(`node ${t.node_id} (${url}): /readyz 200`);
  }
  return result(ok, evidence);
}

/** `/debug/config` of every target against the plan: the startup settings that must equal it. */
export async function checkConfig(deps: CheckDeps, plan: Plan, doc: ChecklistDoc): Promise<CheckResult> {
  const evidence: string[] = [];
  let ok = true;
  for (const t of targets(plan, doc, deps)) {
    const node = plan.target.nodes.find((n) => n.node_id === t.node_id)!;
    if (!t.id) {
      ok = false;
      evidence.push(`node ${t.node_id}: ${t.why}`);
      continue;
    }
    const r = await deps.opsGet({ node: t.id, path: '/debug/config' });
    if (!r.ok || r.value.status !== 200) {
      ok = false;
      const status = r.ok ? r.value.status : 0;
      evidence.push(
        status === 404
          ? `node ${t.node_id}: /debug/config is disabled (observability.debug_api_enable): compare its startup config with the preview and tick by hand`
          : status === 401
            ? `node ${t.node_id}: /debug/config needs the node's bench.api_token (enter it on the Diagnostics page)`
            : `node ${t.node_id}: /debug/config ${r.ok ? r.value.status : r.error.error}`,
      );
      continue;
    }
    let c: Record<string, unknown>;
    try {
      c = JSON.parse(r.value.body) as Record<string, unknown>;
    } catch {
      ok = false;
      evidence.push(`node ${t.node_id}: /debug/config is not JSON`);
      continue;
    }
    const values = (c.values ?? {}) as Record<string, unknown>;
    const want: Array<[string, unknown, unknown]> = [
      ['node.id', c.node_id, node.node_id],
      ['node.data_dir', c.node_data_dir, node.data_dir],
      ['cluster.id', values['cluster.id'], plan.target.cluster_id],
      ['cluster.initial_slot_count', c.initial_slot_count, plan.target.slot_count],
      ['cluster.hash_slot_count', c.hash_slot_count, plan.target.hash_slot_count],
      ['cluster.slot_replica_n', c.slot_replica_count, plan.target.replicas],
      ['cluster.channel_replica_n', c.channel_replica_count, plan.target.channel_replicas],
    ];
    const diff = want.filter(([, got, exp]) => got !== exp);
    if (diff.length > 0) {
      ok = false;
      for (const [k, got, exp] of diff)
        evidence.push(`node ${t.node_id}: ${k} is ${JSON.stringify(got)}, the plan says ${JSON.stringify(exp)}`);
    } else evidence.push(`node ${t.node_id}: ${want.map(([k]) => k).join(', ')} equal the plan`);
  }
  return result(ok, evidence);
}

/**
 * Why a node's gateway address may not be given a credential: it must be a
 * ws(s) URL on the same host as the node's API, so an original token only
 * ever goes to the node the operator named.
 */
export function gatewayProblem(n: { api_url?: string; gateway?: string }): string | undefined {
  if (!n.gateway) return undefined;
  let gw: URL;
  try {
    gw = new URL(n.gateway);
  } catch {
    return 'the gateway address is not a URL';
  }
  if (gw.protocol !== 'ws:' && gw.protocol !== 'wss:') return 'the gateway address must be ws:// or wss://';
  if (gw.username || gw.password || gw.search || gw.hash) return 'the gateway address must not carry credentials, a query or a fragment';
  if (!n.api_url) return 'give the node’s API address first';
  let api: URL;
  try {
    api = new URL(n.api_url);
  } catch {
    return 'the API address is not a URL';
  }
  return api.hostname === gw.hostname ? undefined : `the gateway host ${gw.hostname} is not the API host ${api.hostname}`;
}

/** An original token from the archive connects on every target gateway given; a wrong one is refused. */
export async function checkToken(deps: CheckDeps, plan: Plan, doc: ChecklistDoc, archive: string | undefined): Promise<CheckResult> {
  if (!deps.socket) return result(false, ['this console host cannot open gateway connections']);
  if (!archive) return result(false, ['no complete archive in this plan yet (run export)']);
  const cred = await pickCredential(archive);
  if (!cred) return result(false, [`the archive ${archive} holds no usable credential`]);
  const evidence: string[] = [];
  let ok = true;
  let tried = 0;
  for (const n of plan.target.nodes) {
    const fields = doc.fields.nodes?.find((x) => x.node_id === n.node_id);
    const gateway = fields?.gateway;
    if (!gateway) {
      ok = false;
      evidence.push(`node ${n.node_id}: no gateway address given`);
      continue;
    }
    const why = gatewayProblem(fields);
    if (why) {
      ok = false;
      evidence.push(`node ${n.node_id}: ${why}`);
      continue;
    }
    tried++;
    const who = `uid ${cred.uid} (device_flag ${cred.device_flag})`;
    const good = await tryConnect(deps.socket, gateway, cred);
    if (good.connected) evidence.push(`node ${n.node_id} (${gateway}): ${who} connected with its original token`);
    else {
      ok = false;
      evidence.push(`node ${n.node_id} (${gateway}): ${who} was refused with its original token: ${good.reason}`);
    }
    const bad = await tryConnect(deps.socket, gateway, { ...cred, token: wrongToken() });
    if (!bad.connected) evidence.push(`node ${n.node_id} (${gateway}): a wrong token was refused (${bad.reason})`);
    else {
      ok = false;
      evidence.push(`node ${n.node_id} (${gateway}): a wrong token was ACCEPTED`);
    }
  }
  return result(ok && tried > 0, evidence);
}
