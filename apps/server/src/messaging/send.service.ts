import { Buffer } from 'node:buffer';
import { ChannelType, CMD_SUFFIX, normalizePersonChannel, personParticipants, ReasonCode, SYSTEM_UID } from '@parley/shared';
import type { EnsuredMember } from '@parley/store';
import type { Refusal } from '../errors.ts';
import type { AppendQueue, AppendResult, NewMessage } from './append-queue.ts';
import { Delivery } from './delivery.ts';
import type { MessagingEvents } from './events.ts';
import type { Fanout, SenderRef } from './fanout.ts';
import { checkSendPermission, type PermissionDeps } from './permission.ts';
import type { SessionHandle } from './presence.ts';
import type { Snowflake } from './snowflake.ts';

/** A send from any entry point (gateway or HTTP), already decoded. */
export interface SendCommand {
  fromUid: string;
  deviceId: string;
  /** As the caller gave it: a peer uid or `a@b` for person channels. */
  channelId: string;
  channelType: number;
  payload: Uint8Array;
  /** The payload's JSON-RPC `recv` text when the entry point already has it (see `Delivery.payloadJson`). */
  payloadJson?: string;
  clientMsgNo: string;
  setting: number;
  topic: string;
  expire: number;
  redDot: boolean;
  syncOnce: boolean;
  noPersist: boolean;
  /** The sending session: it gets no RECV echo of its own message. */
  session?: SessionHandle;
  /** Request-scoped recipients (HTTP send): exactly these uids, as a command. */
  subscribers?: readonly string[];
  /** The sending session on another node, for a send forwarded here (cluster mode). */
  origin?: SenderRef;
}

/**
 * Cluster mode: decides where a send is sequenced. `route` runs `local` when
 * this node owns the channel's slot, else forwards the send to the owner and
 * returns the owner's outcome (after its durable commit).
 */
export interface SendRouter {
  route(cmd: SendCommand, local: (cmd: SendCommand) => Promise<SendOutcome>): Promise<SendOutcome>;
}

/**
 * The result of a send. `reason` 1 is success; any other reason carries zero
 * ids. `refusal` names a request-shape problem the HTTP API answers as an
 * error (the realtime gateways answer the reason alone).
 */
export interface SendOutcome {
  reason: number;
  messageId: bigint;
  messageSeq: number;
  refusal?: Refusal;
  /**
   * The message's delivery, when this send appended it: its id as decimal text (`messageIdText`,
   * made once) is what the fan-out already wrote, so a JSON-RPC SENDACK does not convert the id again.
   */
  delivery?: Delivery;
}

/** The request-shape problems of a send, as the HTTP API reports them. */
export const SEND_REFUSALS = {
  invalidRequest: { code: 'invalid_request', status: 400, message: 'invalid request' },
  invalidChannelId: { code: 'invalid_channel_id', status: 400, message: 'invalid channel id' },
  idempotencyConflict: { code: 'idempotency_conflict', status: 409, message: 'client_msg_no was already used with a different payload' },
  subscribersNeedSyncOnce: { code: 'request_subscribers_require_sync_once', status: 400, message: 'request subscribers require sync_once' },
  subscribersWithChannel: {
    code: 'request_subscribers_cannot_include_channel_id',
    status: 400,
    message: 'request subscribers cannot include channel_id',
  },
  subscribersRequired: { code: 'request_subscribers_required', status: 400, message: 'request subscribers required' },
} as const satisfies Record<string, Refusal>;

const rejected = (reason: number, refusal?: Refusal): SendOutcome => ({
  reason,
  messageId: 0n,
  messageSeq: 0,
  ...(refusal ? { refusal } : {}),
});

/** Where a send goes, as `SendService.target` resolves it. */
interface SendTarget {
  channelId: string;
  syncOnce: boolean;
  receiverUid: string | undefined;
  participants: readonly [string, string] | undefined;
  /** The person channel as the sender named it (undefined for any other channel). */
  person: PersonTarget | undefined;
}

/** A person channel as one sender names it: its canonical id, the receiver and both participants. */
interface PersonTarget {
  readonly channelId: string;
  readonly receiverUid: string;
  readonly participants: readonly [string, string];
  /**
   * The channel cache's generation at which the permission rules last allowed this sender to
   * send here on the channel's, the sender's and the receiver's states alone (-1: never). While
   * the generation is the same none of those states changed, so the answer is the same.
   */
  allowedAt: number;
}

/** Most person channels `SendService` keeps resolved (senders × the ids they gave) before it starts over. */
export const PERSON_TARGETS_MAX = 50_000;
/**
 * Most characters those entries may hold (the ids given and the canonical ids) before it starts
 * over: a WKProto client may name ids of up to 32,767 bytes, so the count alone bounds nothing.
 */
export const PERSON_TARGET_CHARS_MAX = 4_000_000;
/** Most person channels (and characters of their ids) `SendService` remembers as having their members, before it starts over. */
export const PERSON_DIRECTORY_MAX = 100_000;
export const PERSON_DIRECTORY_CHARS_MAX = 4_000_000;

/** Header bits stored with a message. */
export const FLAG_NO_PERSIST = 1;
export const FLAG_RED_DOT = 2;
export const FLAG_SYNC_ONCE = 4;

/** Per-message counters the operations collector reads (cumulative since start). */
export interface SendStats {
  /** Sends received from any entry point. */
  sends: number;
  /** Sends answered with reason success. */
  acks: number;
  /** Sends answered with any other reason, or that threw. */
  ackErrors: number;
  /** Fan-outs that failed after the message was committed. */
  fanoutErrors: number;
}

/**
 * The send pipeline: validate → permission → person directory → sequence and
 * durable group commit → result → fan-out. The result is returned only after
 * the message is committed; fan-out runs after and never changes it.
 */
export class SendService {
  private readonly personDirectory = new Set<string>();
  /** Characters of the ids in `personDirectory`. */
  private personDirectoryChars = 0;
  /**
   * Person channels resolved by sender, then the id the sender gave (a peer's
   * uid or `x@y`), up to `PERSON_TARGETS_MAX`: a 1:1 sender names the same
   * peers again and again, and the resolution (two CRC-32s and a new id string,
   * which every later look-up by that id would hash and compare afresh) depends
   * on nothing else.
   */
  private readonly personTargets = new Map<string, Map<string, PersonTarget>>();
  private personTargetCount = 0;
  private personTargetChars = 0;
  readonly stats: SendStats = { sends: 0, acks: 0, ackErrors: 0, fanoutErrors: 0 };
  /** Set in cluster mode. */
  router: SendRouter | undefined;
  private readonly local = (cmd: SendCommand) => this.decide(cmd);

  constructor(
    private readonly deps: PermissionDeps & {
      snowflake: Snowflake;
      queue: AppendQueue;
      fanout: Fanout;
      events?: MessagingEvents;
      onFanoutError(err: unknown): void;
    },
  ) {}

  /**
   * Starts a send and hands its outcome to `settled` once it is settled (after
   * the durable commit), or its error to `failed`; exactly one is called, once.
   * The same pipeline as `send`, but the common send (no cluster router, every
   * channel state it needs cached, persisted, to a known person channel or a
   * group) waits for its commit holding no promise and no suspended async
   * frame: the gateways' per-message entry. Any other send takes `send`.
   * Neither callback may throw.
   */
  submit(cmd: SendCommand, settled: (outcome: SendOutcome) => void, failed: (err: unknown) => void): void {
    if (this.router === undefined && cmd.subscribers === undefined && !cmd.noPersist && this.submitCommon(cmd, settled, failed)) return;
    this.send(cmd).then(settled, failed);
  }

  /** `submit` of a common send; false (nothing done) when the send is not one. */
  private submitCommon(cmd: SendCommand, settled: (outcome: SendOutcome) => void, failed: (err: unknown) => void): boolean {
    const target = this.target(cmd);
    if (target === undefined || typeof target === 'number') return false;
    const { channelId, syncOnce, participants } = target;
    const checked = this.permission(cmd, target);
    if (checked !== ReasonCode.Success) {
      // `send` checks again (a load in progress is shared through the channel cache, so its failure reaches `send`).
      if (typeof checked !== 'number') checked.catch(() => undefined);
      return false;
    }
    this.stats.sends++;
    const messageId = this.deps.snowflake.next();
    const now = Date.now();
    const members = this.newPersonMembers(cmd, channelId, participants);
    this.deps.queue.appendThen(
      this.newMessage(cmd, channelId, syncOnce, messageId, now),
      !syncOnce,
      (result) => {
        if (members && result.kind === 'appended') this.rememberPerson(channelId);
        let outcome: SendOutcome;
        try {
          outcome = this.committed(cmd, result, messageId, channelId, syncOnce, now, participants);
        } catch (err) {
          this.stats.ackErrors++;
          failed(err);
          return;
        }
        if (outcome.reason === ReasonCode.Success) this.stats.acks++;
        else this.stats.ackErrors++;
        settled(outcome);
      },
      (err) => {
        this.stats.ackErrors++;
        failed(err);
      },
      members,
    );
    return true;
  }

  async send(cmd: SendCommand): Promise<SendOutcome> {
    this.stats.sends++;
    try {
      const outcome = this.router ? await this.router.route(cmd, this.local) : await this.decide(cmd);
      if (outcome.reason === ReasonCode.Success) this.stats.acks++;
      else this.stats.ackErrors++;
      return outcome;
    } catch (err) {
      this.stats.ackErrors++;
      throw err;
    }
  }

  private async decide(cmd: SendCommand): Promise<SendOutcome> {
    if (cmd.fromUid === '') return rejected(ReasonCode.AuthFail, SEND_REFUSALS.invalidRequest);
    if (cmd.subscribers !== undefined) return this.sendScoped(cmd, cmd.subscribers);
    const target = this.target(cmd);
    if (target === undefined) return rejected(ReasonCode.PayloadDecodeError, SEND_REFUSALS.invalidRequest);
    if (target === 0) return rejected(ReasonCode.PayloadDecodeError, SEND_REFUSALS.invalidChannelId);
    const { channelId, syncOnce, participants } = target;

    const checked = this.permission(cmd, target);
    const reason = typeof checked === 'number' ? checked : await checked;
    if (reason !== ReasonCode.Success) return rejected(reason);
    if (cmd.noPersist && !syncOnce) return { reason: ReasonCode.Success, messageId: 0n, messageSeq: 0 };

    const messageId = this.deps.snowflake.next();
    const now = Date.now();

    if (cmd.noPersist) {
      this.fanout(this.delivery(cmd, messageId, 0, channelId, cmd.channelType, now, syncOnce, participants), cmd);
      return { reason: ReasonCode.Success, messageId, messageSeq: 0 };
    }

    const members = this.newPersonMembers(cmd, channelId, participants);
    const result = await this.deps.queue.append(this.newMessage(cmd, channelId, syncOnce, messageId, now), !syncOnce, members);
    if (members && result.kind === 'appended') this.rememberPerson(channelId);
    return this.committed(cmd, result, messageId, channelId, syncOnce, now, participants);
  }

  /**
   * The send-permission check (`checkSendPermission`) of a send to `target`. A person channel
   * keeps an allowing answer reached on the three channel states alone (no system uid or system
   * device, whose answers do not depend on them): the next send of the same sender to the same
   * id takes it while the channel cache's generation has not moved, with no look-up. Any
   * change to one of those states removes it from the cache first, which moves the generation.
   */
  private permission(cmd: SendCommand, target: SendTarget): number | Promise<number> {
    const { person } = target;
    const generation = this.deps.cache.generation;
    if (person !== undefined && person.allowedAt === generation) return ReasonCode.Success;
    const checked = checkSendPermission(
      {
        fromUid: cmd.fromUid,
        deviceId: cmd.deviceId,
        channelId: target.channelId,
        channelType: cmd.channelType,
        receiverUid: target.receiverUid,
      },
      this.deps,
    );
    if (checked === ReasonCode.Success && person !== undefined && generation !== undefined && this.onStatesAlone(cmd, person)) {
      person.allowedAt = generation;
    }
    return checked;
  }

  /** Whether the permission rules decide `cmd` to `person` by the channel states alone (no system sender, receiver or device). */
  private onStatesAlone(cmd: SendCommand, person: PersonTarget): boolean {
    const { deps } = this;
    const system = (uid: string): boolean => uid === SYSTEM_UID || deps.isSystemUid(uid);
    return !(cmd.deviceId !== '' && cmd.deviceId === deps.systemDeviceId) && !system(cmd.fromUid) && !system(person.receiverUid);
  }

  /**
   * Where a (non-scoped) send goes: its canonical channel id without a command
   * suffix, whether it is a command, and a person channel's two participants
   * and receiver. undefined for an empty sender, channel or payload (or a bare
   * command suffix), 0 for a malformed person channel id.
   */
  private target(cmd: SendCommand): SendTarget | 0 | undefined {
    if (cmd.fromUid === '' || cmd.channelId === '' || cmd.channelType === 0 || cmd.payload.length === 0) return undefined;
    let channelId = cmd.channelId;
    let syncOnce = cmd.syncOnce;
    if (channelId.endsWith(CMD_SUFFIX)) {
      channelId = channelId.slice(0, -CMD_SUFFIX.length);
      syncOnce = true;
      if (channelId === '') return undefined;
    }
    if (cmd.channelType !== ChannelType.Person)
      return { channelId, syncOnce, receiverUid: undefined, participants: undefined, person: undefined };
    const person = this.personTarget(cmd.fromUid, channelId);
    if (person === undefined) return 0;
    return { channelId: person.channelId, syncOnce, receiverUid: person.receiverUid, participants: person.participants, person };
  }

  /** The person channel `fromUid` names by `given`; undefined for an invalid one. */
  private personTarget(fromUid: string, given: string): PersonTarget | undefined {
    let byGiven = this.personTargets.get(fromUid);
    const known = byGiven?.get(given);
    if (known !== undefined) return known;
    const channelId = normalizePersonChannel(fromUid, given);
    if (!channelId) return undefined;
    const participants = personPair(fromUid, given, channelId);
    const target: PersonTarget = {
      channelId,
      receiverUid: participants[0] === fromUid ? participants[1] : participants[0],
      participants,
      allowedAt: -1,
    };
    // The entry's ids, and the sender's uid when it gets a map of its own.
    const entryChars = given.length + channelId.length;
    const newSender = byGiven === undefined ? fromUid.length : 0;
    if (this.personTargetCount >= PERSON_TARGETS_MAX || this.personTargetChars + entryChars + newSender > PERSON_TARGET_CHARS_MAX) {
      this.personTargets.clear();
      this.personTargetCount = 0;
      this.personTargetChars = 0;
      byGiven = undefined;
    }
    if (byGiven === undefined) {
      this.personTargets.set(fromUid, (byGiven = new Map()));
      this.personTargetChars += fromUid.length;
    }
    byGiven.set(given, target);
    this.personTargetCount++;
    this.personTargetChars += entryChars;
    return target;
  }

  /** Person channels resolved and kept (at most `PERSON_TARGETS_MAX`), and the characters they hold. */
  get personTargetsHeld(): { count: number; chars: number } {
    return { count: this.personTargetCount, chars: this.personTargetChars };
  }

  /** The row of a persisted send (`channelId` canonical, without a command suffix). */
  private newMessage(cmd: SendCommand, channelId: string, syncOnce: boolean, messageId: bigint, now: number): NewMessage {
    return {
      channelId: syncOnce ? channelId + CMD_SUFFIX : channelId,
      channelType: cmd.channelType,
      messageId,
      clientMsgNo: cmd.clientMsgNo,
      fromUid: cmd.fromUid,
      setting: cmd.setting,
      flags: (cmd.redDot ? FLAG_RED_DOT : 0) | (syncOnce ? FLAG_SYNC_ONCE : 0),
      expire: cmd.expire,
      topic: cmd.topic,
      createdAt: now,
      payload: cmd.payload,
    };
  }

  /** The outcome of a persisted send once its append settled; a newly appended message is fanned out first. */
  private committed(
    cmd: SendCommand,
    result: AppendResult,
    messageId: bigint,
    channelId: string,
    syncOnce: boolean,
    now: number,
    participants: readonly [string, string] | undefined,
  ): SendOutcome {
    if (result.kind === 'conflict') return rejected(ReasonCode.SystemError, SEND_REFUSALS.idempotencyConflict);
    if (result.kind === 'appended') {
      const d = this.delivery(cmd, messageId, result.messageSeq, channelId, cmd.channelType, now, syncOnce, participants);
      this.deps.events?.messageCommitted?.(d);
      this.fanout(d, cmd);
      return { reason: ReasonCode.Success, messageId: result.messageId, messageSeq: result.messageSeq, delivery: d };
    }
    return { reason: ReasonCode.Success, messageId: result.messageId, messageSeq: result.messageSeq };
  }

  /**
   * A request-scoped send: a command to exactly the listed uids, logged under
   * a temp channel derived from them. No permission checks apply.
   */
  private async sendScoped(cmd: SendCommand, subscribers: readonly string[]): Promise<SendOutcome> {
    const uids = [...new Set(subscribers.map((u) => u.trim()).filter((u) => u !== ''))];
    if (uids.length === 0) return rejected(ReasonCode.PayloadDecodeError, SEND_REFUSALS.subscribersRequired);
    if (!cmd.syncOnce) return rejected(ReasonCode.PayloadDecodeError, SEND_REFUSALS.subscribersNeedSyncOnce);
    if (cmd.channelId !== '') return rejected(ReasonCode.PayloadDecodeError, SEND_REFUSALS.subscribersWithChannel);
    if (cmd.payload.length === 0) return rejected(ReasonCode.PayloadDecodeError, SEND_REFUSALS.invalidRequest);
    const channelId = scopedChannelId(uids);
    const messageId = this.deps.snowflake.next();
    const now = Date.now();
    if (cmd.noPersist) {
      this.deps.fanout.deliverTo(uids, this.delivery(cmd, messageId, 0, channelId, ChannelType.Temp, now, true), cmd.session, cmd.origin);
      return { reason: ReasonCode.Success, messageId, messageSeq: 0 };
    }
    const result = await this.deps.queue.append(
      {
        channelId: channelId + CMD_SUFFIX,
        channelType: ChannelType.Temp,
        messageId,
        clientMsgNo: cmd.clientMsgNo,
        fromUid: cmd.fromUid,
        setting: cmd.setting,
        flags: (cmd.redDot ? FLAG_RED_DOT : 0) | FLAG_SYNC_ONCE,
        expire: cmd.expire,
        topic: cmd.topic,
        createdAt: now,
        payload: cmd.payload,
      },
      false,
    );
    if (result.kind === 'conflict') return rejected(ReasonCode.SystemError, SEND_REFUSALS.idempotencyConflict);
    if (result.kind === 'appended') {
      const d = this.delivery(cmd, messageId, result.messageSeq, channelId, ChannelType.Temp, now, true);
      this.deps.events?.messageCommitted?.(d);
      this.deps.fanout.deliverTo(uids, d, cmd.session, cmd.origin);
    }
    return { reason: ReasonCode.Success, messageId: result.messageId, messageSeq: result.messageSeq };
  }

  /** The delivery of a send: `channelId` canonical, without a command suffix; `now` unix ms. */
  private delivery(
    cmd: SendCommand,
    messageId: bigint,
    messageSeq: number,
    channelId: string,
    channelType: number,
    now: number,
    syncOnce: boolean,
    participants?: readonly [string, string],
  ): Delivery {
    const d = new Delivery(
      messageId,
      messageSeq,
      cmd.clientMsgNo,
      cmd.fromUid,
      channelId,
      channelType,
      Math.floor(now / 1000),
      cmd.payload,
      cmd.setting,
      cmd.topic,
      cmd.expire,
      cmd.redDot,
      syncOnce,
      cmd.noPersist,
    );
    d.payloadJson = cmd.payloadJson;
    d.participants = participants;
    return d;
  }

  private fanout(delivery: Delivery, cmd: SendCommand): void {
    // Synchronous for person channels; a promise only when a group's subscribers must be loaded.
    let pending: Promise<void> | undefined;
    try {
      pending = this.deps.fanout.deliver(delivery, cmd.session, cmd.origin);
    } catch (err) {
      this.fanoutFailed(err);
      return;
    }
    pending?.catch((err: unknown) => this.fanoutFailed(err));
  }

  private fanoutFailed(err: unknown): void {
    this.stats.fanoutErrors++;
    this.deps.onFanoutError(err);
  }

  /**
   * Both participants of a person channel this node has not yet seen a message of, as the
   * memberships its append makes sure of (in the message's own transaction, on every store):
   * from its first message on, both are members. undefined
   * for any other channel (`target` gives only a person channel its participants), a known
   * person channel, or a send from the system uid.
   */
  private newPersonMembers(
    cmd: SendCommand,
    channelId: string,
    participants: readonly [string, string] | undefined,
  ): EnsuredMember[] | undefined {
    if (participants === undefined || cmd.fromUid === SYSTEM_UID || this.personDirectory.has(channelId)) return undefined;
    const [a, b] = participants;
    return [
      { channelId, channelType: cmd.channelType, uid: a },
      { channelId, channelType: cmd.channelType, uid: b },
    ];
  }

  /** A person channel whose participants are members (its append committed with them). */
  private rememberPerson(channelId: string): void {
    if (this.personDirectory.has(channelId)) return;
    if (this.personDirectory.size >= PERSON_DIRECTORY_MAX || this.personDirectoryChars + channelId.length > PERSON_DIRECTORY_CHARS_MAX) {
      this.personDirectory.clear();
      this.personDirectoryChars = 0;
    }
    this.personDirectory.add(channelId);
    this.personDirectoryChars += channelId.length;
  }

  /** Person channels remembered as having their members, and the characters of their ids (a diagnostic; tests read it). */
  get personDirectoryHeld(): { count: number; chars: number } {
    return { count: this.personDirectory.size, chars: this.personDirectoryChars };
  }
}

/**
 * The two participants of the person channel `canonical` (as `personParticipants`
 * splits it), where `fromUid` sent to `given` (a peer uid or `a@b`): when neither
 * uid has an `@`, the very strings at hand (their hashes are cached for the
 * map look-ups that follow), else the split halves.
 */
export function personPair(fromUid: string, given: string, canonical: string): readonly [string, string] {
  if (given.indexOf('@') >= 0 || fromUid.indexOf('@') >= 0) return personParticipants(canonical)!;
  return canonical.charCodeAt(fromUid.length) === 0x40 && canonical.startsWith(fromUid) ? [fromUid, given] : [given, fromUid];
}

const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MASK_64 = 0xffffffffffffffffn;

/** The temp channel of a request-scoped send: decimal FNV-1a-64 of the uids joined by `,`. */
export function scopedChannelId(uids: readonly string[]): string {
  let h = FNV_OFFSET;
  for (const byte of Buffer.from(uids.join(','), 'utf8')) h = ((h ^ BigInt(byte)) * FNV_PRIME) & MASK_64;
  return h.toString();
}
