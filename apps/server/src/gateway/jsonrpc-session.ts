import {
  checkPingParams,
  compactRecvackMessageId,
  compactSend,
  decodeJsonRpc,
  encodeError,
  encodeNotification,
  encodeRecv,
  encodeResult,
  encodeSendResult,
  InvalidParamsError,
  JsonRpcDecodeError,
  JsonRpcErrorCode,
  readConnectParams,
  readRecvackMessageId,
  readSendParams,
  recvPayloadJson,
  type JsonRpcFrame,
  type JsonRpcId,
  type SendParams,
} from '@parley/protocol/jsonrpc';
import { reasonName, ReasonCode } from '@parley/shared';
import type { Logger } from 'pino';
import type { Delivery } from '../messaging/delivery.ts';
import type { SendOutcome } from '../messaging/send.service.ts';
import type { SessionHandle } from '../messaging/presence.ts';
import { KICK_GRACE_MS, type AuthResult } from '../identity/token.service.ts';
import { CloseCode, type WsConnection } from './connection.ts';
import { refusalReason, SessionErrorClass } from './metrics.ts';
import { startSend, type GatewayServices } from './services.ts';
import { SessionBase } from './session-base.ts';
import { wsAsciiTextFrame, wsTextFrame } from './ws-frame.ts';
import { ackIdKey, ackIdMatches, ackIdText } from './ws-recvack.ts';

/** A decimal message id as RECVACKs name them. */
const DECIMAL_ID = /^\d{1,20}$/;

/** Close reasons of the JSON-RPC error codes, as `session_error` alerts report them. */
const ERROR_REASONS: Record<number, string> = {
  [JsonRpcErrorCode.ParseError]: 'parse_error',
  [JsonRpcErrorCode.InvalidRequest]: 'invalid_request',
  [JsonRpcErrorCode.MethodNotFound]: 'method_not_found',
  [JsonRpcErrorCode.InvalidParams]: 'invalid_params',
};

/**
 * One JSON-RPC session over WebSocket: `connect` first, then `send`, `ping`
 * and `recvack`; the server pushes `recv`. Malformed frames get a JSON-RPC
 * error and the session is closed; nothing here can crash the process.
 * JSON-RPC sessions are bridged as protocol version 6 and are not encrypted.
 */
export class JsonRpcSession extends SessionBase implements SessionHandle {
  readonly protocol = 'jsonrpc' as const;

  constructor(
    private readonly conn: WsConnection,
    private readonly services: GatewayServices,
    private readonly log: Logger,
  ) {
    super(services.ackPolicy);
  }

  /** Handles one inbound text message. */
  onMessage(text: string): void {
    // One per delivered message: a compact recvack is read without the full decoder (same outcome).
    const ackedId = compactRecvackMessageId(text);
    if (ackedId !== undefined) {
      this.onRecvack(ackedId);
      return;
    }
    this.inbound = (this.inbound + 1) | 0;
    if (this.state === 'closed') return;
    // One per message: a compact send is read without the full decoder (same params, same refusals).
    if (this.state === 'open') {
      const send = compactSend(text);
      if (send !== undefined) {
        try {
          this.submitSend(send.id, send.params);
        } catch (err) {
          this.handlerFailed(send.id, err);
        }
        return;
      }
    }
    let frame: JsonRpcFrame;
    try {
      frame = decodeJsonRpc(text);
    } catch (err) {
      const e = err instanceof JsonRpcDecodeError ? err : new JsonRpcDecodeError(JsonRpcErrorCode.ParseError, 'invalid frame');
      if (e.recoverable && this.state !== 'awaiting-connect') this.conn.send(encodeError(e.id, { code: e.code, message: e.message }));
      else this.fail(e.id, e.code, e.message);
      return;
    }
    // Synchronous for all but connect, so the per-message frames (send, recvack) make no promise here.
    let pending: Promise<void> | undefined;
    try {
      pending = this.dispatch(frame);
    } catch (err) {
      this.handlerFailed(frame.kind === 'request' ? frame.id : null, err);
      return;
    }
    pending?.catch((err: unknown) => this.handlerFailed(frame.kind === 'request' ? frame.id : null, err));
  }

  /** A compact `recvack` read by `onMessage`; ignored before CONNECT completes. */
  onRecvack(messageId: string): void {
    this.inbound = (this.inbound + 1) | 0;
    if (this.state !== 'closed' && this.authenticated) this.acked(messageId);
  }

  /**
   * A compact `recvack` read by the gateway before ws (see ws-recvack.ts), as
   * its slot there: compared where it lies with the id of the oldest RECV
   * awaiting an ack (the one an in-order client acks), made a string only
   * for any other.
   */
  onCompactRecvack(slot: number): void {
    this.inbound = (this.inbound + 1) | 0;
    if (this.state === 'closed' || !this.authenticated) return;
    const oldest = this.oldestPending();
    if (oldest !== undefined && ackIdMatches(slot, (oldest.jsonrpcAckKey ??= ackIdKey(oldest.messageIdText)))) this.ackedOldest();
    else this.acked(ackIdText(slot));
  }

  /** A handler threw: logged, answered -32603 for request `id`, and the session is closed. */
  private handlerFailed(id: JsonRpcId | null, err: unknown): void {
    this.log.error({ err, session: this.id }, 'json-rpc handler failed');
    this.fail(id, JsonRpcErrorCode.InternalError, 'internal error');
  }

  /** Called when the socket closes, whoever closed it. */
  onClose(): void {
    if (this.state === 'open') this.services.presence.remove(this);
    this.state = 'closed';
    this.forgetAcks();
  }

  expire(reason: 'auth timeout' | 'idle timeout'): void {
    this.closeWith(CloseCode.PolicyViolation, reason);
  }

  deliver(d: Delivery): void {
    if (this.state !== 'open' || !this.awaitAck(d)) return;
    this.conn.sendTextFrame(this.recvFrame(d));
  }

  protected resend(d: Delivery): void {
    if (this.state === 'open') this.conn.sendTextFrame(this.recvFrame(d));
  }

  protected closeUnacked(reason: string): void {
    this.closeWith(CloseCode.PolicyViolation, reason, ['recv_unacked', SessionErrorClass.backpressure]);
  }

  /**
   * The `recv` notification of a delivery as this session sees it, framed for
   * WebSocket (shared by every session with the same view).
   */
  private recvFrame(d: Delivery): Buffer {
    const channelId = d.channelIdFor(this.uid);
    const redDot = d.redDotFor(this.uid);
    if (redDot) {
      if (d.jsonrpcView1 === channelId) return d.jsonrpcFrame1!;
    } else if (d.jsonrpcView0 === channelId) {
      return d.jsonrpcFrame0!;
    }
    d.payloadJson ??= recvPayloadJson(d.payload);
    const text = encodeRecv(
      {
        redDot,
        syncOnce: d.syncOnce,
        noPersist: d.noPersist,
        setting: d.setting,
        expire: d.expire,
        messageId: d.messageIdText,
        messageSeq: d.messageSeq,
        clientMsgNo: d.clientMsgNo,
        timestamp: d.timestamp,
        channelId,
        channelType: d.channelType,
        topic: d.topic,
        fromUid: d.fromUid,
      },
      d.payloadJson,
    );
    const frame = wsTextFrame(text);
    if (redDot) {
      d.jsonrpcView1 = channelId;
      d.jsonrpcFrame1 = frame;
    } else {
      d.jsonrpcView0 = channelId;
      d.jsonrpcFrame0 = frame;
    }
    return frame;
  }

  kick(reasonCode: number, reason: string): void {
    if (this.state === 'closed') return;
    this.conn.send(encodeNotification('disconnect', { reasonCode, reason }));
    const timer = setTimeout(() => this.closeWith(CloseCode.Normal, reason), KICK_GRACE_MS);
    timer.unref();
  }

  /** Tells the client the server is going away; the gateway closes the socket once in-flight sends are answered. */
  goAway(reasonCode: number, reason: string): void {
    if (this.state === 'open') this.conn.send(encodeNotification('disconnect', { reasonCode, reason }));
  }

  /** Routes one frame; a promise only from connect (a send answers itself once settled). */
  private dispatch(frame: JsonRpcFrame): Promise<void> | undefined {
    if (frame.kind === 'response') {
      this.fail(frame.id, JsonRpcErrorCode.InvalidRequest, 'the server does not accept responses');
      return;
    }
    // recvack needs an authenticated session; before that it is ignored, not an error (realtime.md §3.2).
    if (!this.authenticated && frame.kind === 'notification' && frame.method === 'recvack') return;
    if (this.state === 'awaiting-connect') {
      if (frame.kind !== 'request' || frame.method !== 'connect') {
        this.fail(frame.kind === 'request' ? frame.id : null, JsonRpcErrorCode.InvalidRequest, 'connect must be the first request');
        return;
      }
      return this.connect(frame.id, frame.params);
    }
    if (this.state === 'authenticating') {
      this.fail(frame.kind === 'request' ? frame.id : null, JsonRpcErrorCode.InvalidRequest, 'wait for the connect result');
      return;
    }
    if (frame.kind === 'notification') {
      if (frame.method === 'recvack') this.recvack(frame.params);
      else this.fail(null, JsonRpcErrorCode.MethodNotFound, `notification ${frame.method} is not supported`);
      return;
    }
    switch (frame.method) {
      case 'send':
        this.send(frame.id, frame.params);
        return;
      case 'ping':
        if (this.withParams(frame.id, () => checkPingParams(frame.params))) this.conn.send(encodeResult(frame.id, null));
        return;
      case 'connect':
        this.fail(frame.id, JsonRpcErrorCode.InvalidRequest, 'already connected');
        return;
      case 'disconnect':
      case 'subscribe':
      case 'unsubscribe':
        this.fail(frame.id, JsonRpcErrorCode.MethodNotFound, `${frame.method} is not supported`);
        return;
      default:
        this.fail(frame.id, JsonRpcErrorCode.MethodNotFound, `unknown method ${frame.method}`);
    }
  }

  private async connect(id: JsonRpcId, raw: unknown): Promise<void> {
    let params: ReturnType<typeof readConnectParams> | undefined;
    if (!this.withParams(id, () => (params = readConnectParams(raw))) || !params) return;
    this.state = 'authenticating';
    const version = params.version === 0 || params.version > 6 ? 6 : params.version;
    const now = Date.now();
    const base = {
      serverVersion: version,
      server_version: version,
      serverKey: '',
      server_key: '',
      salt: '',
      timeDiff: params.clientTimestamp ? now - params.clientTimestamp : 0,
      time_diff: params.clientTimestamp ? now - params.clientTimestamp : 0,
      nodeId: this.services.nodeId,
      node_id: this.services.nodeId,
    };
    const reason = params.uid === '' ? ReasonCode.AuthFail : undefined;
    const auth: AuthResult =
      reason === undefined
        ? await this.services.tokens.authenticate(params.uid, params.deviceFlag, params.token)
        : { reason, deviceLevel: 0 };
    if (this.state !== 'authenticating') return;
    // The ban came with the credentials; only a device with no record needs a look-up of its own.
    if (auth.reason === ReasonCode.Success && (auth.banned ?? (await this.services.isUserBanned(params.uid)))) auth.reason = ReasonCode.Ban;
    if (this.state !== 'authenticating') return;
    if (auth.reason !== ReasonCode.Success) {
      if (auth.reason === ReasonCode.AuthFail) this.services.metrics.authFailures++;
      this.log.info({ uid: params.uid, deviceFlag: params.deviceFlag, session: this.id }, 'connect refused');
      // An error object, not a result: clients such as EasySDK resolve connect() on any result.
      this.conn.send(encodeError(id, { code: auth.reason, message: reasonName(auth.reason) }));
      this.conn.send(encodeNotification('disconnect', { reasonCode: auth.reason, reason: reasonName(auth.reason) }));
      this.closeWith(CloseCode.PolicyViolation, reasonName(auth.reason), [refusalReason(auth.reason), SessionErrorClass.auth]);
      return;
    }
    this.uid = params.uid;
    this.deviceFlag = params.deviceFlag;
    this.deviceId = params.deviceId;
    this.deviceLevel = auth.deviceLevel;
    for (const old of this.services.presence.conflicting(this.uid, this.deviceFlag, this.deviceId, this.deviceLevel)) {
      old.kick(ReasonCode.ConnectKick, 'login in other device');
    }
    this.state = 'open';
    this.markAuthenticated();
    this.services.presence.add(this);
    // Framed here and written straight to the socket, as every later result is (no trip through ws's sender).
    this.conn.sendTextFrame(wsTextFrame(encodeResult(id, { ...base, reasonCode: ReasonCode.Success, reason_code: ReasonCode.Success })));
  }

  /**
   * Reads a `send` and starts it; its result is written once the send is
   * settled (after its durable commit). No promise of its own: the send's
   * promise is the only one per message here.
   */
  private send(id: JsonRpcId, raw: unknown): void {
    let p: SendParams;
    try {
      p = readSendParams(raw);
    } catch (err) {
      if (!(err instanceof InvalidParamsError)) throw err;
      this.fail(id, JsonRpcErrorCode.InvalidParams, err.message);
      return;
    }
    this.submitSend(id, p);
  }

  /** Starts a send with read params; its result is written once it is settled. */
  private submitSend(id: JsonRpcId, p: SendParams): void {
    startSend(
      this.services.send,
      {
        fromUid: this.uid,
        deviceId: this.deviceId,
        channelId: p.channelId,
        channelType: p.channelType,
        payload: p.payload,
        payloadJson: p.payloadJson,
        clientMsgNo: p.clientMsgNo,
        setting: p.setting,
        topic: p.topic,
        expire: p.expire,
        redDot: p.header.redDot,
        syncOnce: p.header.syncOnce,
        noPersist: p.header.noPersist,
        session: this,
      },
      this.log,
      this.id,
      (outcome) => this.answerSend(id, outcome),
    );
  }

  private answerSend(id: JsonRpcId, outcome: SendOutcome): void {
    if (this.state !== 'open') return;
    try {
      const d = outcome.delivery;
      const text = encodeSendResult(
        id,
        d !== undefined ? d.messageIdText : outcome.messageId.toString(),
        outcome.messageSeq,
        outcome.reason,
      );
      // With a numeric id every character of the result is ASCII.
      this.conn.sendTextFrame(typeof id === 'number' ? wsAsciiTextFrame(text) : wsTextFrame(text));
    } catch (err) {
      this.handlerFailed(id, err);
    }
  }

  private recvack(raw: unknown): void {
    try {
      const messageId = readRecvackMessageId(raw);
      if (DECIMAL_ID.test(messageId)) this.acked(messageId);
    } catch (err) {
      if (!(err instanceof InvalidParamsError)) throw err;
      this.fail(null, JsonRpcErrorCode.InvalidParams, err.message);
    }
  }

  /** Runs a params reader; answers -32602 and closes when it rejects them. */
  private withParams(id: JsonRpcId, read: () => void): boolean {
    try {
      read();
      return true;
    } catch (err) {
      if (!(err instanceof InvalidParamsError)) throw err;
      this.fail(id, JsonRpcErrorCode.InvalidParams, err.message);
      return false;
    }
  }

  /** Answers with a JSON-RPC error object, then closes the session (a protocol error for top alerts). */
  private fail(id: JsonRpcId | null, code: number, message: string): void {
    this.conn.send(encodeError(id, { code, message }));
    const error: [string, SessionErrorClass] =
      code === JsonRpcErrorCode.InternalError
        ? ['internal_error', SessionErrorClass.internal]
        : [ERROR_REASONS[code] ?? 'invalid_request', SessionErrorClass.protocol];
    this.closeWith(CloseCode.PolicyViolation, message.slice(0, 120), error);
  }

  close(reason: string): void {
    this.closeWith(CloseCode.Normal, reason);
  }

  private closeWith(code: number, reason: string, error?: [string, SessionErrorClass]): void {
    if (this.state === 'closed') return;
    if (error) this.services.metrics.sessionError('jsonrpc', error[0], error[1]);
    if (this.state === 'open') this.services.presence.remove(this);
    this.state = 'closed';
    this.conn.close(code, reason);
  }
}
