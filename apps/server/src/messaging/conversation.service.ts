import { Buffer } from 'node:buffer';
import { ChannelType, normalizePersonChannel, personPeer, type ConversationItem, type ConversationPage } from '@parley/shared';
import { invalid } from '../errors.ts';
import type { DirectoryKey, MembershipRow, StoredMessage, Store } from '@parley/store';
import type { AppendQueue } from './append-queue.ts';
import { toMessageResp } from './sync.service.ts';

/** A refused conversation request: a 400 with code `conversation_rejected`. */
const rejected = (message: string) => invalid(message, 'conversation_rejected');

/** A conversation's channel as the client names it. */
export interface ChannelRef {
  channel_id: string;
  channel_type: number;
}

/** A conversation `/conversation/sync` can return. */
export interface VisibleConversation {
  /** Canonical channel id (person channels: `a@b`; `item.channel_id` shows the peer). */
  channelId: string;
  item: ConversationItem;
  tail: number;
  last?: StoredMessage;
}

export const MAX_PAGE = 200;
/** Most memberships the deprecated `/conversation/sync` scans for one user. */
export const MAX_SYNC_SCAN = 10_000;
const DEFAULT_PAGE = 50;
const NS_PER_MS = 1_000_000n;

/** Opaque directory cursor: base64url of [1][active_at i64][type u64][len u16][id]. */
export function encodeCursor(k: DirectoryKey): string {
  const id = Buffer.from(k.channelId, 'utf8');
  const buf = Buffer.alloc(1 + 8 + 8 + 2 + id.length);
  buf[0] = 1;
  buf.writeBigInt64BE(BigInt(k.activatedAt) * NS_PER_MS, 1);
  buf.writeBigUInt64BE(BigInt(k.channelType), 9);
  buf.writeUInt16BE(id.length, 17);
  id.copy(buf, 19);
  return buf.toString('base64url');
}

export function decodeCursor(text: string): DirectoryKey | undefined {
  if (text.length > 1024 || !/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  const buf = Buffer.from(text, 'base64url');
  if (buf.length < 19 || buf[0] !== 1) return undefined;
  const len = buf.readUInt16BE(17);
  if (buf.length !== 19 + len) return undefined;
  const type = buf.readBigUInt64BE(9);
  if (type > 255n) return undefined;
  return { activatedAt: Number(buf.readBigInt64BE(1) / NS_PER_MS), channelType: Number(type), channelId: buf.toString('utf8', 19) };
}

/**
 * The conversation directory, derived from memberships (there are no
 * conversation rows): visibility, unread and last message come from each
 * membership's floors and the channel's committed tail.
 */
export class ConversationService {
  constructor(
    private readonly store: Store,
    private readonly queue: AppendQueue,
  ) {}

  /** `/conversation/list`: one page of candidates; echo `next_cursor` until `done`. */
  async list(uid: string, cursor: string, limit: number): Promise<ConversationPage> {
    const after = cursor === '' ? undefined : decodeCursor(cursor);
    if (cursor !== '' && !after) throw rejected('cursor格式错误！');
    const size = limit <= 0 ? DEFAULT_PAGE : limit;
    const rows = await this.store.memberships.pageByUid(uid, after, size);
    const page = await this.resolve(uid, rows);
    const last = rows.at(-1);
    const done = rows.length < size;
    return {
      ...page,
      ...(last ? { next_cursor: encodeCursor(last) } : {}),
      done,
      coverage: BigInt(Date.now()) * NS_PER_MS,
      tombstones_retained_since: 0n,
      reset_required: false,
    };
  }

  /** `/conversation/retry`: point reads of the given conversations. */
  async retry(uid: string, channels: readonly ChannelRef[]): Promise<ConversationPage> {
    const rows: MembershipRow[] = [];
    const deletes: ChannelRef[] = [];
    for (const ref of channels) {
      const id = this.canonical(uid, ref.channel_id, ref.channel_type);
      const row = id === undefined ? undefined : await this.store.memberships.get(id, ref.channel_type, uid);
      if (row) rows.push(row);
      else deletes.push({ channel_id: ref.channel_id, channel_type: ref.channel_type });
    }
    const page = await this.resolve(uid, rows);
    return {
      ...page,
      deletes: [...page.deletes, ...deletes],
      done: true,
      coverage: BigInt(Date.now()) * NS_PER_MS,
      tombstones_retained_since: 0n,
      reset_required: false,
    };
  }

  /** Every visible conversation of `uid`, newest message first (for the deprecated `/conversation/sync`). */
  async all(uid: string, max: number): Promise<VisibleConversation[]> {
    const out: VisibleConversation[] = [];
    let after: DirectoryKey | undefined;
    for (let scanned = 0; scanned < MAX_SYNC_SCAN; scanned += MAX_PAGE) {
      const rows = await this.store.memberships.pageByUid(uid, after, MAX_PAGE);
      for (const row of rows) {
        const r = await this.view(uid, row);
        if (r.kind === 'visible') out.push({ channelId: row.channelId, item: r.item, tail: r.tail, last: r.last });
      }
      if (rows.length < MAX_PAGE) break;
      after = rows.at(-1);
    }
    out.sort((a, b) => (b.last?.createdAt ?? 0) - (a.last?.createdAt ?? 0));
    return out.slice(0, max);
  }

  async clearUnread(uid: string, channelId: string, channelType: number): Promise<void> {
    const m = await this.live(uid, channelId, channelType);
    await this.store.memberships.raiseReadSeq(m.channelId, channelType, uid, await this.queue.tail(m.channelId, channelType));
  }

  /** Lowers unread to at most `unread` (it never raises unread). */
  async setUnread(uid: string, channelId: string, channelType: number, unread: number): Promise<void> {
    const m = await this.live(uid, channelId, channelType);
    const tail = await this.queue.tail(m.channelId, channelType);
    const target = Math.max(floorOf(m), tail - unread);
    if (target > m.readSeq) await this.store.memberships.raiseReadSeq(m.channelId, channelType, uid, target);
  }

  async delete(uid: string, channelId: string, channelType: number): Promise<void> {
    const m = await this.live(uid, channelId, channelType);
    await this.store.memberships.hideUpTo(m.channelId, channelType, uid, await this.queue.tail(m.channelId, channelType));
  }

  async activate(uid: string, channelId: string, channelType: number): Promise<void> {
    const m = await this.live(uid, channelId, channelType);
    await this.store.memberships.activate(m.channelId, channelType, uid, Date.now());
  }

  private canonical(uid: string, channelId: string, channelType: number): string | undefined {
    return channelType === ChannelType.Person ? normalizePersonChannel(uid, channelId) : channelId;
  }

  private async live(uid: string, channelId: string, channelType: number): Promise<MembershipRow> {
    const id = this.canonical(uid, channelId, channelType);
    if (id === undefined) throw rejected('invalid channel_id');
    const m = await this.store.memberships.get(id, channelType, uid);
    if (!m || m.removed) throw rejected('conversation membership not found');
    return m;
  }

  private async resolve(uid: string, rows: MembershipRow[]) {
    const conversations: ConversationItem[] = [];
    const deletes: ChannelRef[] = [];
    for (const row of rows) {
      const r = await this.view(uid, row);
      if (r.kind === 'visible') conversations.push(r.item);
      else if (r.kind === 'deleted') deletes.push(r.ref);
    }
    return { conversations, deletes, unresolved: [] as ChannelRef[] };
  }

  private async view(uid: string, row: MembershipRow) {
    const shown = row.channelType === ChannelType.Person ? personPeer(uid, row.channelId) : row.channelId;
    const ref = { channel_id: shown, channel_type: row.channelType };
    if (row.removed) return { kind: 'deleted' as const, ref };
    const channel = await this.store.channels.get(row.channelId, row.channelType);
    if (channel?.disband === 1) return { kind: 'deleted' as const, ref };
    const floor = floorOf(row);
    const tail = await this.queue.tail(row.channelId, row.channelType);
    const hasMessage = tail >= row.joinSeq && tail > row.deletedToSeq;
    if (!hasMessage && row.activatedAt === 0) return { kind: 'hidden' as const };
    const effectiveRead = Math.max(floor, row.readSeq, row.lastSendSeq);
    const last = hasMessage
      ? (await this.store.messages.range(row.channelId, row.channelType, floor + 1, tail, 1, true)).messages[0]
      : undefined;
    const item: ConversationItem = {
      ...ref,
      active_at: BigInt(row.activatedAt) * NS_PER_MS,
      read_seq: row.readSeq,
      deleted_to_seq: row.deletedToSeq,
      unread: Math.max(0, tail - effectiveRead),
      last_message: last
        ? {
            message_id: last.messageId,
            message_idstr: last.messageId.toString(),
            message_seq: last.messageSeq,
            from_uid: last.fromUid,
            client_msg_no: last.clientMsgNo,
            server_timestamp_ms: last.createdAt,
            payload: toMessageResp(last, uid).payload,
          }
        : null,
    };
    return { kind: 'visible' as const, item, tail, last };
  }
}

function floorOf(m: MembershipRow): number {
  return Math.max(m.joinSeq - 1, m.deletedToSeq);
}
