import type {
  BenchChannelsBody,
  BenchEvictBody,
  BenchProbeBody,
  BenchRuntimeQuery,
  BenchSubscribersBody,
  BenchUsersTokensBody,
} from '@parley/shared';
import { BENCH_VERSION } from '@parley/shared';
import { DomainError } from '../errors.ts';
import type { OpsInputs } from './ops.ts';

/** A bench rule violation: a 400 with code `bench_error` (the route answers `{status, msg}`). */
const benchError = (message: string) => new DomainError('bench_error', 400, message);

/** Process-local counters `/bench/v1/snapshot` reports. */
export interface BenchCounts {
  accepted_users: number;
  accepted_channels: number;
  accepted_subscriber_items: number;
  accepted_subscribers: number;
  removed_subscriber_items: number;
  removed_subscribers: number;
}

/** Widest generated range one channel-runtime request may cover. */
export const MAX_RUNTIME_RANGE = 100_000;

/** Name of generated channel `index` of a bench run's profile. */
export const generatedChannelId = (runId: string, profile: string, index: number): string => `${runId}-${profile}-${index}`;

type Deps = Pick<OpsInputs, 'tokens' | 'channels' | 'cache' | 'queue' | 'presence' | 'routeAddresses'>;

/** The node and the limits `bench.*` sets. */
export interface BenchLimits {
  nodeId: number;
  /** `bench.api_max_batch_size`: top-level items per mutation. */
  maxBatch: number;
  /** `bench.api_max_payload_bytes`: largest mutation body, bytes. */
  maxPayloadBytes: number;
}

/**
 * Bench data preparation: batches persist through the same services as the
 * business routes (`users/tokens` through `TokenService.store`, like
 * `/user/token`); counts move only after a successful write, so a failed
 * batch leaves a durable prefix and can be upserted again.
 */
export class BenchService {
  readonly counts: BenchCounts = {
    accepted_users: 0,
    accepted_channels: 0,
    accepted_subscriber_items: 0,
    accepted_subscribers: 0,
    removed_subscriber_items: 0,
    removed_subscribers: 0,
  };

  constructor(
    private readonly deps: Deps,
    private readonly limits: BenchLimits,
  ) {}

  /** `GET /bench/v1/capabilities`: what this node's bench surface supports. */
  capabilities() {
    return {
      enabled: true,
      version: BENCH_VERSION,
      supports: {
        users_tokens_batch: true,
        channels_batch: true,
        channel_subscribers_batch: true,
        channel_subscriber_removals_batch: true,
        snapshot: true,
        presence_snapshot: true,
        channel_runtime_snapshot: true,
        channel_runtime_probe: true,
        channel_runtime_evict: true,
        channel_runtime_faults: false,
        channel_runtime_activate: false,
        terminal_fence_prepare: false,
        channel_types: ['person', 'group'],
      },
      limits: { max_batch_size: this.limits.maxBatch, max_payload_bytes: this.limits.maxPayloadBytes },
    };
  }

  /** `GET /bench/v1/capacity-target`: the gateway a load generator connects to. */
  capacityTarget(host: string | undefined) {
    return { version: BENCH_VERSION, gateway: this.deps.routeAddresses(host) };
  }

  /** `GET /bench/v1/snapshot`: what this process accepted so far. */
  snapshot() {
    return { version: BENCH_VERSION, counts: { ...this.counts } };
  }

  /** `GET /bench/v1/presence/snapshot`: one node owns every route it holds. */
  presenceSnapshot() {
    const active = this.deps.presence.connections;
    return {
      version: BENCH_VERSION,
      node_id: this.limits.nodeId,
      owner_routes_active: active,
      owner_routes_pending: 0,
      owner_touched_dirty: 0,
      authority_routes_active: active,
      touch_routes_total: 0,
      expired_routes_total: 0,
    };
  }

  /** `GET /bench/v1/channel-runtime/snapshot`: the channels this node sequences and its append queue. */
  runtimeSnapshot(q: BenchRuntimeQuery) {
    const ids = this.runtimeQuery(q);
    const active = this.deps.queue.activeChannels;
    return {
      version: BENCH_VERSION,
      node_id: this.limits.nodeId,
      ...ids,
      active_total: active,
      active_leader: active,
      active_follower: 0,
      follower_parked: 0,
      activation_rejected_total: 0,
      worker_queues: [{ pool: 'append', depth: this.deps.queue.depth }],
    };
  }

  private ids(body: { run_id?: string; batch_id?: string }, items: readonly unknown[]): { run_id: string; batch_id: string } {
    const run_id = (body.run_id ?? '').trim();
    const batch_id = (body.batch_id ?? '').trim();
    if (run_id === '') throw benchError('run_id is required');
    if (batch_id === '') throw benchError('batch_id is required');
    if (items.length > this.limits.maxBatch) throw benchError(`batch size ${items.length} exceeds max ${this.limits.maxBatch}`);
    return { run_id, batch_id };
  }

  async usersTokens(body: BenchUsersTokensBody) {
    const users = body.users && body.users.length > 0 ? body.users : (body.items ?? []);
    const ids = this.ids(body, users);
    let accepted = 0;
    for (const u of users) {
      await this.deps.tokens.store(u.uid, u.token, u.device_flag ?? 0, u.device_level ?? 0, '');
      accepted++;
      this.counts.accepted_users++;
    }
    return { ...ids, accepted };
  }

  async channels(body: BenchChannelsBody) {
    const list = body.channels && body.channels.length > 0 ? body.channels : (body.items ?? []);
    const ids = this.ids(body, list);
    let accepted = 0;
    const bit = (b: boolean | undefined) => (b ? 1 : 0);
    for (const c of list) {
      await this.deps.channels.upsert(c.channel_id, c.channel_type, {
        large: bit(c.large),
        ban: bit(c.ban),
        disband: bit(c.disband),
        sendBan: bit(c.send_ban),
        allowStranger: bit(c.allow_stranger),
      });
      accepted++;
      this.counts.accepted_channels++;
    }
    return { ...ids, accepted };
  }

  async subscribers(body: BenchSubscribersBody, remove: boolean) {
    const items = body.items ?? [];
    const ids = this.ids(body, items);
    if (items.some((i) => i.reset)) throw benchError('bench/v1 subscribers reset=true is not supported');
    let accepted = 0;
    let subscribers = 0;
    for (const it of items) {
      if (remove) await this.deps.channels.removeSubscribers(it.channel_id, it.channel_type, it.subscribers);
      else await this.deps.channels.addSubscribers(it.channel_id, it.channel_type, it.subscribers);
      accepted++;
      subscribers += it.subscribers.length;
      if (remove) {
        this.counts.removed_subscriber_items++;
        this.counts.removed_subscribers += it.subscribers.length;
      } else {
        this.counts.accepted_subscriber_items++;
        this.counts.accepted_subscribers += it.subscribers.length;
      }
    }
    return { ...ids, accepted, accepted_subscribers: subscribers };
  }

  /** Checks the optional generated range of `channel-runtime/snapshot`. */
  private runtimeQuery(q: BenchRuntimeQuery): { run_id?: string; profile?: string } {
    const bounded = (q.start ?? '') !== '' || (q.end ?? '') !== '';
    if (!bounded) return { ...(q.run_id ? { run_id: q.run_id } : {}), ...(q.profile ? { profile: q.profile } : {}) };
    const int = (s: string | undefined) => (s !== undefined && /^\d{1,9}$/.test(s) ? Number(s) : NaN);
    const type = int(q.channel_type);
    if (!q.run_id || !q.profile || !(type >= 0 && type <= 255))
      throw benchError('run_id, profile and channel_type are required with a range');
    this.checkRange(int(q.start), int(q.end));
    return { run_id: q.run_id, profile: q.profile };
  }

  private checkRange(start: number, end: number): void {
    if (!(start >= 0 && end > start)) throw benchError('invalid range: need 0 <= start < end');
    if (end - start > MAX_RUNTIME_RANGE) throw benchError(`range too large: max ${MAX_RUNTIME_RANGE}`);
  }

  private generated(b: { run_id?: string; profile?: string; channel_type?: number; range?: { start: number; end: number } }) {
    if (!b.run_id?.trim() || !b.profile?.trim() || b.channel_type === undefined || !b.range)
      throw benchError('run_id, profile, channel_type and range are required');
    this.checkRange(b.range.start, b.range.end);
    const out: Array<{ channel_id: string; channel_type: number }> = [];
    for (let i = b.range.start; i < b.range.end; i++)
      out.push({ channel_id: generatedChannelId(b.run_id, b.profile, i), channel_type: b.channel_type });
    return out;
  }

  async probe(body: BenchProbeBody) {
    const explicit = body.channels !== undefined;
    const generated = body.range !== undefined || body.profile !== undefined;
    if (explicit === generated) throw benchError('exactly one selector is required: channels or run_id/profile/channel_type/range');
    let targets: Array<{ channel_id: string; channel_type: number }>;
    if (explicit) {
      targets = body.channels!;
      if (targets.length === 0) throw benchError('channels must not be empty');
      if (new Set(targets.map((c) => `${c.channel_type}:${c.channel_id}`)).size !== targets.length)
        throw benchError('channels must be unique');
    } else targets = this.generated(body);
    const channels = [];
    const missing: string[] = [];
    for (const c of targets) {
      const leo = await this.deps.queue.tail(c.channel_id, c.channel_type);
      const loaded = leo > 0 || (await this.deps.channels.exists(c.channel_id, c.channel_type));
      if (!loaded) missing.push(c.channel_id);
      channels.push({
        ...c,
        role: 'leader',
        status: loaded ? 'loaded' : 'missing',
        leo,
        hw: leo,
        checkpoint_hw: leo,
        leader_epoch: 0,
        channel_epoch: 0,
      });
    }
    return {
      version: BENCH_VERSION,
      node_id: this.limits.nodeId,
      run_id: body.run_id ?? '',
      profile: body.profile ?? '',
      checked: targets.length,
      loaded_leader: targets.length - missing.length,
      loaded_follower: 0,
      missing,
      channels,
    };
  }

  evict(body: BenchEvictBody) {
    const targets = this.generated(body);
    for (const c of targets) this.deps.cache.invalidate(c.channel_id, c.channel_type);
    return {
      version: BENCH_VERSION,
      node_id: this.limits.nodeId,
      run_id: body.run_id,
      profile: body.profile,
      requested: targets.length,
      evicted: targets.length,
      skipped_busy: 0,
      missing: 0,
    };
  }
}
