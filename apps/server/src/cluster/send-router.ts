import { performance } from 'node:perf_hooks';
import { ChannelType, CMD_SUFFIX, normalizePersonChannel, ReasonCode } from '@parley/shared';
import type { Logger } from 'pino';
import type { Refusal } from '../errors.ts';
import { scopedChannelId, type SendCommand, type SendOutcome, type SendRouter } from '../messaging/send.service.ts';
import { BusRequestError, type Bus } from './bus.ts';
import type { SlotManager } from './slot-manager.ts';
import { decodeReply, decodeSend, encodeOutcome, encodeSend } from './wire.ts';

/** The answer to a send whose slot owner could not be reached before `cluster.forward_timeout`. */
export const CLUSTER_UNAVAILABLE: Refusal = {
  code: 'cluster_unavailable',
  status: 503,
  message: 'the node that sequences this channel is not reachable; retry with the same client_msg_no',
};

/** The channel whose slot sequences a send, or undefined when the send is malformed (the local path refuses it). */
export function sendChannelOf(cmd: SendCommand): string | undefined {
  if (cmd.subscribers !== undefined) {
    const uids = [...new Set(cmd.subscribers.map((u) => u.trim()).filter((u) => u !== ''))];
    return uids.length === 0 ? undefined : scopedChannelId(uids);
  }
  const id = cmd.channelId.endsWith(CMD_SUFFIX) ? cmd.channelId.slice(0, -CMD_SUFFIX.length) : cmd.channelId;
  if (id === '') return undefined;
  if (cmd.channelType === ChannelType.Person) return normalizePersonChannel(cmd.fromUid, id);
  return id;
}

/** Whether an append failed because this node's claim on the slot is gone (it may succeed at the new owner). */
export type FencedCheck = (err: unknown) => number | undefined;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const BACKOFF_MS = [10, 25, 50, 100, 200, 250];

/**
 * Sends in cluster mode. A send that appends is sequenced by the owner of its
 * channel's slot: here when this node owns it, else forwarded over the bus
 * (request/reply) to the owner, whose reply comes only after its durable
 * commit. While a slot has no reachable owner (a failover in progress), the
 * send waits and asks again, up to `cluster.forward_timeout`. Transient sends
 * (no_persist) run here: fan-out reaches every node anyway.
 */
export class ClusterSendRouter implements SendRouter {
  private readonly forwarded = new WeakSet<SendCommand>();
  /** Forwards waiting for an answer, by the node they went to: given up at once when that node leaves. */
  private readonly waiting = new Map<number, Set<() => void>>();
  readonly stats = { forwarded: 0, served: 0, retries: 0, unavailable: 0 };

  constructor(
    private readonly bus: Bus,
    private readonly slots: SlotManager,
    private readonly nodeId: number,
    private readonly timeoutMs: number,
    /** The slot an append error fenced this node off from, if it is such an error. */
    private readonly fencedSlot: FencedCheck,
    /** Whether a node's heartbeats are being heard (a gone owner is not asked; its lease is waited out). */
    private readonly isLive: (node: number) => boolean,
    private readonly log: Logger,
  ) {}

  /** Answers sends other nodes forward to this one. */
  serve(send: (cmd: SendCommand) => Promise<SendOutcome>): void {
    this.bus.subscribe(this.bus.subject('send', this.nodeId), async (body) => {
      const decoded = decodeSend(body);
      if (!decoded) return { error: 'forwarded send with an unexpected shape' };
      const cmd: SendCommand = { ...decoded.cmd, ...(decoded.origin ? { origin: decoded.origin } : {}) };
      this.forwarded.add(cmd);
      this.stats.served++;
      try {
        return encodeOutcome(await send(cmd));
      } catch (err) {
        if (err instanceof NotOwnerError) return { notOwner: true };
        throw err;
      }
    });
  }

  async route(cmd: SendCommand, local: (cmd: SendCommand) => Promise<SendOutcome>): Promise<SendOutcome> {
    if (cmd.noPersist) return local(cmd);
    const channel = sendChannelOf(cmd);
    if (channel === undefined) return local(cmd);
    const slot = this.slots.table.slotOf(channel);
    const forwarded = this.forwarded.has(cmd);
    const deadline = performance.now() + this.timeoutMs;
    for (let attempt = 0; ; attempt++) {
      if (this.slots.ownsWritable(slot)) {
        try {
          return await local(cmd);
        } catch (err) {
          const fenced = this.fencedSlot(err);
          if (fenced === undefined) throw err;
          this.slots.lose(fenced, 'an append was fenced off');
        }
      } else if (forwarded) {
        // Never forward a forwarded send again: the origin asks the slot map anew.
        throw new NotOwnerError();
      } else {
        const owner = this.slots.ownerOf(slot);
        if (owner !== undefined && owner !== this.nodeId && this.isLive(owner)) {
          const outcome = await this.forward(owner, cmd, deadline - performance.now());
          if (outcome) return outcome;
        }
        this.slots.nudge();
      }
      const left = deadline - performance.now();
      if (left <= 0) {
        this.stats.unavailable++;
        this.log.warn({ slot }, 'send refused: no reachable owner for its slot within cluster.forward_timeout');
        return { reason: ReasonCode.SystemError, messageId: 0n, messageSeq: 0, refusal: CLUSTER_UNAVAILABLE };
      }
      this.stats.retries++;
      await sleep(Math.min(left, BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)]!));
    }
  }

  /**
   * A node's heartbeats stopped: forwards waiting on it are asked again
   * elsewhere at once (a dead node never answers, and waiting out the
   * forward timeout would hold its slots' sends far longer than the takeover).
   */
  nodeLeft(node: number): void {
    const set = this.waiting.get(node);
    if (!set) return;
    this.waiting.delete(node);
    for (const giveUp of set) giveUp();
  }

  /** One forward to `owner`: its outcome, or undefined when it was not (or no longer) the owner, did not answer, or left. */
  private async forward(owner: number, cmd: SendCommand, timeoutMs: number): Promise<SendOutcome | undefined> {
    if (timeoutMs <= 0) return undefined;
    this.stats.forwarded++;
    const origin = cmd.session ? { node: this.nodeId, session: cmd.session.id } : cmd.origin;
    let giveUp!: () => void;
    const left = new Promise<undefined>((resolve) => (giveUp = () => resolve(undefined)));
    let set = this.waiting.get(owner);
    if (!set) this.waiting.set(owner, (set = new Set()));
    set.add(giveUp);
    try {
      const answer = await Promise.race([this.bus.request(this.bus.subject('send', owner), encodeSend(cmd, origin), timeoutMs), left]);
      if (answer === undefined) return undefined;
      const reply = decodeReply(answer);
      if (reply === 'not_owner') return undefined;
      if ('error' in reply) throw new Error(`node ${owner} failed the forwarded send: ${reply.error}`);
      return reply;
    } catch (err) {
      if (err instanceof BusRequestError) return undefined;
      throw err;
    } finally {
      set.delete(giveUp);
    }
  }
}

/** A forwarded send reached a node that does not own its slot. */
export class NotOwnerError extends Error {
  constructor() {
    super('not the owner of this slot');
    this.name = 'NotOwnerError';
  }
}
