import process from 'node:process';
import type { Readable } from 'node:stream';
import type { DebugCluster, DebugConfig } from '@parley/shared';
import { redactedValues, type Config } from '../config/config.ts';
import { DomainError } from '../errors.ts';
import {
  activeResourcesText,
  cpuProfile,
  DEFAULT_PROFILE_SECONDS,
  heapSnapshot,
  MAX_PROFILE_SECONDS,
  PPROF_PROFILES,
  PPROF_UNSUPPORTED,
} from './profiler.ts';

/** `GET /debug/config`: the node's settings, secrets redacted. */
export function debugConfig(config: Config): DebugConfig {
  return {
    node_id: config.node.id,
    node_name: config.node.name,
    node_data_dir: config.node.dataDir,
    cluster_listen: '',
    api_listen: String(config.values['api.listen_addr']),
    gateway_listeners: 2,
    metrics_enable: config.observability.metricsEnable,
    debug_api_enable: config.observability.debugApiEnable,
    diagnostics_enable: true,
    initial_slot_count: config.cluster.initialSlotCount,
    hash_slot_count: config.cluster.hashSlotCount,
    slot_replica_count: config.cluster.slotReplicaN,
    channel_replica_count: config.cluster.channelReplicaN,
    channel_max_loaded_count: 0,
    values: redactedValues(config),
  };
}

/** `GET /debug/cluster`: a single node has no slots to report. */
export function debugCluster(config: Config): DebugCluster {
  return { node_id: config.node.id, state_revision: 0, slots: [] };
}

/** The `/debug/pprof/` index: what each profile maps to on Node.js. */
export function pprofIndex(): string {
  const lines = ['/debug/pprof/ (Node.js)', ''];
  for (const [name, doc] of Object.entries(PPROF_PROFILES)) lines.push(`${name}: ${doc}`);
  lines.push('', `not available on Node.js: ${PPROF_UNSUPPORTED.join(', ')}`);
  return `${lines.join('\n')}\n`;
}

/** One `/debug/pprof/*name` answer: its media type, body, and a file name when it is a download. */
export interface PprofAnswer {
  type: string;
  body: string | Readable;
  filename?: string;
}

const TEXT = 'text/plain; charset=utf-8';

/**
 * `/debug/pprof/*name`: Node's stand-ins for Go's profiles (a V8 CPU profile
 * for `seconds`, a heap snapshot, the event loop's active handles). A profile
 * Node has no equivalent for is a 404.
 */
export async function pprof(name: string, seconds: string | undefined): Promise<PprofAnswer> {
  switch (name) {
    case '':
      return { type: TEXT, body: pprofIndex() };
    case 'profile': {
      const s = seconds === undefined || seconds === '' ? DEFAULT_PROFILE_SECONDS : /^\d{1,3}$/.test(seconds) ? Number(seconds) : NaN;
      if (!(s >= 1 && s <= MAX_PROFILE_SECONDS)) {
        throw new DomainError('invalid_seconds', 400, `seconds must be between 1 and ${MAX_PROFILE_SECONDS}`);
      }
      return { type: 'application/json', body: await cpuProfile(s), filename: 'profile.cpuprofile' };
    }
    case 'heap':
    case 'allocs':
      return { type: 'application/json', body: heapSnapshot(), filename: 'heap.heapsnapshot' };
    case 'goroutine':
      return { type: TEXT, body: activeResourcesText() };
    case 'cmdline':
      return { type: TEXT, body: process.argv.join('\u0000') };
    case 'symbol':
      return { type: TEXT, body: 'num_symbols: 0\n' };
    default:
      throw new DomainError(
        'unknown_profile',
        404,
        PPROF_UNSUPPORTED.includes(name) ? `profile not available on Node.js: ${name}` : `unknown profile: ${name}`,
      );
  }
}
