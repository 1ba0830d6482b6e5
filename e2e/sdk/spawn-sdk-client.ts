/**
 * Parent-side driver for one real `wukongimjssdk` client running in a child
 * process (see sdk-child.mjs). Children are killed on close() and when the
 * parent process exits; a child also exits by itself when its IPC channel
 * closes (parent crash).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { fileURLToPath } from 'node:url';
import { sdkBundlePath } from './build-sdk-bundle.ts';

/** The SDK's ConnectStatus values. */
export const SdkConnectStatus = { Disconnect: 0, Connected: 1, Connecting: 2, ConnectFail: 3, ConnectKick: 4 } as const;

/** Options of {@link spawnSdkClient}. */
export interface SdkClientOptions {
  /** `ws://127.0.0.1:port/` of the gateway. */
  wsAddr: string;
  uid: string;
  token: string;
  /** 0 APP, 1 WEB (SDK default), 2 PC. */
  deviceFlag?: number;
  /** CONNECT version; unset keeps the SDK's own default (2 in the published 1.0.4). */
  protoVersion?: number;
  /** Default timeout of connect/sendText/nextMessage in ms (default 5000). */
  timeoutMs?: number;
}

/** A connect-status change reported by the SDK's listener. */
export interface SdkStatus {
  status: number;
  reasonCode: number;
}

/** A message delivered to the SDK (RECV that verified and decrypted). */
export interface SdkMessage {
  fromUID: string;
  channelId: string;
  channelType: number;
  messageSeq: number;
  /** Decimal string, exactly as the SDK holds it. */
  messageID: string;
  clientMsgNo: string;
  timestamp: number;
  contentType: number;
  /** The decoded JSON payload. */
  content: Record<string, unknown> | null;
  /** MessageText's text, when contentType is 1. */
  text?: string;
  header: { redDot: boolean; noPersist: boolean; syncOnce: boolean };
}

/** The SENDACK for one sendText, as the SDK's status listener saw it. */
export interface SdkSendResult {
  clientSeq: number;
  clientMsgNo: string;
  messageID: string;
  messageSeq: number;
  reasonCode: number;
}

type ChildEvent =
  | ({ event: 'status' } & SdkStatus)
  | ({ event: 'message' } & SdkMessage)
  | { event: 'sent'; reqId: number; clientSeq: number; clientMsgNo: string }
  | { event: 'sendack'; clientSeq: number; messageID: string; messageSeq: number; reasonCode: number }
  | { event: 'ready'; sdkProtoVersion: number }
  | { event: 'log'; line: string }
  | { event: 'error'; reqId?: number; message: string };

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

const CHILD = fileURLToPath(new URL('./sdk-child.mjs', import.meta.url));

function timeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      t = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(t));
}

/** Events: `status` (SdkStatus), `message` (SdkMessage), `sendack`, `sdk-error` (string), `exit`. */
export class SdkClient extends EventEmitter {
  /** Last connect status reported by the SDK. */
  status: SdkStatus | undefined;
  /** The SDK's console output and errors (last 500 lines), for debugging failures. */
  readonly logs: string[] = [];
  private readonly inbox: SdkMessage[] = [];
  private readonly acks = new Map<number, SdkSendResult>();
  private readonly sentBy = new Map<number, (v: { clientSeq: number; clientMsgNo: string }) => void>();
  private reqId = 0;

  constructor(
    private readonly child: ChildProcess,
    private readonly timeoutMs: number,
  ) {
    super();
    child.on('message', (m: ChildEvent) => this.onChild(m));
    child.once('exit', (code, signal) => {
      live.delete(child);
      this.emit('exit', { code, signal });
    });
  }

  private log(line: string): void {
    this.logs.push(line);
    if (this.logs.length > 500) this.logs.shift();
  }

  private onChild(m: ChildEvent): void {
    switch (m.event) {
      case 'status':
        this.status = { status: m.status, reasonCode: m.reasonCode };
        this.emit('status', this.status);
        return;
      case 'message':
        this.inbox.push(m);
        this.emit('message', m);
        return;
      case 'sent':
        this.sentBy.get(m.reqId)?.({ clientSeq: m.clientSeq, clientMsgNo: m.clientMsgNo });
        this.sentBy.delete(m.reqId);
        return;
      case 'sendack':
        this.acks.set(m.clientSeq, { ...m, clientMsgNo: '' });
        this.emit('sendack', m);
        return;
      case 'log':
        this.log(m.line);
        return;
      case 'error':
        this.log(`ERROR ${m.message}`);
        this.emit('sdk-error', m.message);
        return;
      default:
        return;
    }
  }

  /**
   * Resolves with the first non-undefined `pick()` result, re-checked on every
   * `event`; the listener is always removed (also on timeout or rejection).
   */
  private waitFor<T>(event: string, pick: () => T | undefined, ms: number, what: string): Promise<T> {
    try {
      const now = pick();
      if (now !== undefined) return Promise.resolve(now);
    } catch (e) {
      return Promise.reject(e as Error);
    }
    let on: (() => void) | undefined;
    const p = new Promise<T>((resolve, reject) => {
      on = (): void => {
        try {
          const v = pick();
          if (v !== undefined) resolve(v);
        } catch (e) {
          reject(e as Error);
        }
      };
      this.on(event, on);
    });
    return timeout(p, ms, what).finally(() => on && this.off(event, on));
  }

  private post(cmd: Record<string, unknown>): void {
    if (!this.child.connected) throw new Error('SDK child process is gone');
    this.child.send(cmd);
  }

  /** Resolves once the SDK reports `status` (default Connected); rejects on ConnectFail/Kick or timeout. */
  waitForStatus(status: number = SdkConnectStatus.Connected, ms = this.timeoutMs): Promise<SdkStatus> {
    return this.waitFor(
      'status',
      () => {
        const s = this.status;
        if (s?.status === status) return s;
        if (s && (s.status === SdkConnectStatus.ConnectFail || s.status === SdkConnectStatus.ConnectKick)) {
          throw Object.assign(new Error(`SDK status ${s.status}, reason ${s.reasonCode}`), s);
        }
        return undefined;
      },
      ms,
      `SDK status ${status}`,
    );
  }

  /** Starts the SDK's connect and waits for Connected. */
  connect(ms = this.timeoutMs): Promise<SdkStatus> {
    const done = this.waitForStatus(SdkConnectStatus.Connected, ms);
    this.post({ cmd: 'connect' });
    return done;
  }

  /** Sends a MessageText through the SDK's chat manager and resolves with its SENDACK. */
  async sendText(channelId: string, channelType: number, text: string, ms = this.timeoutMs): Promise<SdkSendResult> {
    const reqId = ++this.reqId;
    const sent = new Promise<{ clientSeq: number; clientMsgNo: string }>((resolve) => this.sentBy.set(reqId, resolve));
    this.post({ cmd: 'sendText', reqId, channelId, channelType, text });
    const { clientSeq, clientMsgNo } = await timeout(sent, ms, 'SDK send');
    const ack = await this.waitFor('sendack', () => this.acks.get(clientSeq), ms, `SENDACK for client_seq ${clientSeq}`);
    this.acks.delete(clientSeq);
    return { ...ack, clientMsgNo };
  }

  /** The next message delivered to the SDK. */
  nextMessage(ms = this.timeoutMs): Promise<SdkMessage> {
    return this.waitFor('message', () => this.inbox.shift(), ms, 'SDK message');
  }

  /** Process id of the child running the SDK. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Kills the child process and waits for it to exit. */
  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGKILL');
    await exited;
  }
}

/** Spawns a child process running the real SDK configured for `opts`; resolves once the SDK is loaded. */
export async function spawnSdkClient(opts: SdkClientOptions): Promise<SdkClient> {
  const bundle = await sdkBundlePath();
  const child = fork(CHILD, [], {
    execArgv: [],
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    env: { ...process.env, PARLEY_WKSDK_BUNDLE: bundle, PARLEY_WKSDK_OPTIONS: JSON.stringify(opts) },
  });
  live.add(child);
  const client = new SdkClient(child, opts.timeoutMs ?? 5000);
  child.stderr?.on('data', (d: Buffer) => client.logs.push(d.toString()));
  const ready = new Promise<void>((resolve, reject) => {
    child.on('message', (m: ChildEvent) => m.event === 'ready' && resolve());
    child.once('exit', (code) => reject(new Error(`SDK child exited early (${code}): ${client.logs.join('\n')}`)));
  });
  await timeout(ready, 10_000, 'SDK child start').catch(async (e: unknown) => {
    await client.close();
    throw e;
  });
  return client;
}
