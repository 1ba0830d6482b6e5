import { ChannelType, CMD_SUFFIX, normalizePersonChannel, type MessageResp } from '@parley/shared';
import type { Store, StoredMessage } from '@parley/store';
import { invalid } from '../errors.ts';
import type { AppendQueue } from './append-queue.ts';
import { toMessageResp } from './sync.service.ts';

/** How long a `/message/sync` result waits for its `/message/syncack`, ms. */
const RECORD_TTL_MS = 5 * 60_000;
/** Most uids with a pending sync record in this process. */
const MAX_RECORD_UIDS = 4096;
/** Most command logs one sync reads and records per uid. */
const MAX_CHANNELS_PER_UID = 2048;
export const DEFAULT_SYNC_LIMIT = 200;
/**
 * Most command rows one `/message/sync` reads across all its logs. Each log
 * contributes a seq-ordered prefix and syncack acknowledges exactly what was
 * returned, so rows not read now come with the next sync.
 */
const MAX_ROWS_READ = 100_000;
export const MAX_SYNC_LIMIT = 10_000;

interface SyncRecord {
  at: number;
  /** command log key → highest seq returned */
  seqs: Map<string, { channelId: string; channelType: number; seq: number }>;
}

/**
 * Command messages (SyncOnce) for offline devices: uids bind to a channel's
 * command log and recover later commands with `/message/sync`, then confirm
 * with `/message/syncack`. The sync record lives in this process, so a sync
 * and its syncack must reach the same node (sticky routing).
 */
export class CmdService {
  private readonly records = new Map<string, SyncRecord>();

  constructor(
    private readonly store: Store,
    private readonly queue: AppendQueue,
  ) {}

  /** The command log id of a channel as `uid` names it (person ids are normalized). */
  private logId(uid: string, channelId: string, channelType: number): string {
    const base = channelId.endsWith(CMD_SUFFIX) ? channelId.slice(0, -CMD_SUFFIX.length) : channelId;
    if (channelType !== ChannelType.Person) return base + CMD_SUFFIX;
    const canonical = normalizePersonChannel(uid, base);
    if (!canonical) throw invalid('invalid channel_id');
    return canonical + CMD_SUFFIX;
  }

  /** Binds uids to a channel's command log: they recover commands after its current tail. */
  async bind(uids: readonly string[], channelId: string, channelType: number): Promise<void> {
    for (const group of this.byLog(uids, channelId, channelType)) {
      const start = (await this.queue.tail(group.logId, channelType)) + 1;
      await this.store.cmdBindings.bind(group.uids, group.logId, channelType, start);
    }
  }

  async unbind(uids: readonly string[], channelId: string, channelType: number): Promise<void> {
    for (const group of this.byLog(uids, channelId, channelType)) {
      await this.store.cmdBindings.unbind(group.uids, group.logId, channelType);
    }
  }

  /** `/message/sync`: unacknowledged commands of every live binding, oldest first. */
  async sync(uid: string, limit: number): Promise<MessageResp[]> {
    const max = limit <= 0 ? DEFAULT_SYNC_LIMIT : Math.min(limit, MAX_SYNC_LIMIT);
    const bindings = await this.store.cmdBindings.listLive(uid, MAX_CHANNELS_PER_UID);
    const found: StoredMessage[] = [];
    const perLog = Math.max(1, Math.min(max, Math.floor(MAX_ROWS_READ / Math.max(1, bindings.length))));
    for (const b of bindings) {
      const from = Math.max(b.startSeq, b.ackSeq + 1);
      const page = await this.store.messages.range(b.channelId, b.channelType, from, Number.MAX_SAFE_INTEGER, perLog, false);
      found.push(...page.messages);
    }
    found.sort(
      (a, b) =>
        a.createdAt - b.createdAt ||
        (a.channelId < b.channelId ? -1 : a.channelId > b.channelId ? 1 : 0) ||
        a.channelType - b.channelType ||
        a.messageSeq - b.messageSeq ||
        (a.messageId < b.messageId ? -1 : a.messageId > b.messageId ? 1 : 0),
    );
    const picked = found.slice(0, max);
    const record: SyncRecord = { at: Date.now(), seqs: new Map() };
    for (const m of picked) {
      const key = `${m.channelType}:${m.channelId}`;
      const prev = record.seqs.get(key);
      if (!prev || prev.seq < m.messageSeq) record.seqs.set(key, { channelId: m.channelId, channelType: m.channelType, seq: m.messageSeq });
    }
    this.remember(uid, record);
    return picked.map((m) => {
      const source = { ...m, channelId: m.channelId.endsWith(CMD_SUFFIX) ? m.channelId.slice(0, -CMD_SUFFIX.length) : m.channelId };
      return toMessageResp(source, uid);
    });
  }

  /** `/message/syncack`: acknowledges exactly what the last sync of `uid` on this process returned. */
  async syncack(uid: string): Promise<void> {
    const record = this.records.get(uid);
    this.records.delete(uid);
    if (!record || Date.now() - record.at > RECORD_TTL_MS) return;
    for (const r of record.seqs.values()) await this.store.cmdBindings.ack(uid, r.channelId, r.channelType, r.seq);
  }

  private remember(uid: string, record: SyncRecord): void {
    this.records.delete(uid);
    this.records.set(uid, record);
    const now = Date.now();
    for (const [key, r] of this.records) {
      if (this.records.size <= MAX_RECORD_UIDS && now - r.at <= RECORD_TTL_MS) break;
      this.records.delete(key);
    }
  }

  private byLog(uids: readonly string[], channelId: string, channelType: number): Array<{ logId: string; uids: string[] }> {
    const groups = new Map<string, string[]>();
    for (const uid of new Set(uids)) {
      const id = this.logId(uid, channelId, channelType);
      const list = groups.get(id) ?? [];
      list.push(uid);
      groups.set(id, list);
    }
    return [...groups].map(([logId, list]) => ({ logId, uids: list }));
  }
}
