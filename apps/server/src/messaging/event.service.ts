import { ChannelType, normalizePersonChannel } from '@parley/shared';
import type { MessageEvent, Store } from '@parley/store';
import { invalid } from '../errors.ts';
import { STREAM_STATUS as STATUS } from './event-meta.ts';

/** A refused event request: a 400 with code `event_rejected`. */
const rejected = (message: string) => invalid(message, 'event_rejected');

const FINISH_LANE = '__finish__';
/** Largest event payload kept, bytes of JSON text. */
export const MAX_EVENT_PAYLOAD = 256 * 1024;

export interface EventInput {
  channelId: string;
  channelType: number;
  fromUid: string;
  messageId: bigint;
  clientMsgNo: string;
  eventId: string;
  eventType: string;
  eventKey: string;
  visibility: string;
  occurredAt: number;
  payload: unknown;
}

/**
 * Stream events of a message (`/message/event`), anchored by
 * `(channel, client_msg_no)` and idempotent by `event_id`. Every event is
 * durable and numbered, so `msg_event_seq` is never 0 here.
 */
export class EventService {
  constructor(private readonly store: Store) {}

  async append(e: EventInput): Promise<{ event: MessageEvent; status: string; channelId: string }> {
    const type = e.eventType.toLowerCase();
    if (!(type in STATUS)) throw rejected(`unknown event_type ${JSON.stringify(e.eventType)}`);
    const channelId = this.canonical(e.fromUid, e.channelId, e.channelType);
    const payload = e.payload === undefined ? 'null' : JSON.stringify(e.payload);
    if (payload.length > MAX_EVENT_PAYLOAD) throw rejected(`event payload exceeds ${MAX_EVENT_PAYLOAD} bytes`);
    const event = await this.store.events.append({
      channelId,
      channelType: e.channelType,
      clientMsgNo: e.clientMsgNo,
      eventId: e.eventId,
      eventKey: type === 'stream.finish' ? FINISH_LANE : e.eventKey || 'main',
      eventType: type,
      fromUid: e.fromUid,
      messageId: e.messageId,
      visibility: e.visibility.trim(),
      occurredAt: e.occurredAt,
      payload,
    });
    return { event, status: STATUS[event.eventType]!, channelId };
  }

  /** Events of one message after `fromSeq`, oldest first. */
  async list(
    uid: string,
    channelId: string,
    channelType: number,
    clientMsgNo: string,
    fromSeq: number,
    limit: number,
  ): Promise<MessageEvent[]> {
    return this.store.events.list(this.canonical(uid, channelId, channelType), channelType, clientMsgNo, fromSeq, limit);
  }

  private canonical(uid: string, channelId: string, channelType: number): string {
    if (channelType !== ChannelType.Person && channelType !== ChannelType.Agent) return channelId;
    if (channelType === ChannelType.Agent) return channelId;
    const c = normalizePersonChannel(uid, channelId);
    if (!c) throw rejected('invalid channel_id');
    return c;
  }
}
