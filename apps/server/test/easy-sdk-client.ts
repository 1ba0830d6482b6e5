import { randomUUID } from 'node:crypto';
import { WebSocket } from 'ws';

type Listener = (value: unknown) => void;

/**
 * A JSON-RPC client that treats the connect response the way WuKongIM's
 * EasySDK-JS does (its behaviour, written here for tests): requests carry no
 * `jsonrpc` member, the connect params have no `version` or `clientKey`;
 * any `result` resolves `connect()` and marks the client connected, an
 * `error` rejects it; a close before the answer rejects it too; a
 * `disconnect` notification disconnects locally; `recv` is acked at once.
 */
export class EasySdkStyleClient {
  isConnected = false;
  private ws: WebSocket | undefined;
  private readonly pending = new Map<string, { resolve: Listener; reject: Listener }>();
  private readonly listeners = new Map<string, Listener[]>();
  /** Every event emitted, in order, as `[name, value]`. */
  readonly events: Array<[string, unknown]> = [];

  constructor(private readonly opts: { url: string; uid: string; token: string; deviceFlag?: number }) {}

  on(event: 'connect' | 'disconnect' | 'error' | 'message', fn: Listener): void {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), fn]);
  }

  connect(): Promise<void> {
    return new Promise((resolve, reject) => {
      let settled = false;
      const ws = new WebSocket(this.opts.url);
      this.ws = ws;
      ws.on('open', () => {
        this.request('connect', {
          uid: this.opts.uid,
          token: this.opts.token,
          deviceId: `web_${randomUUID().slice(0, 8)}_${Date.now()}`,
          deviceFlag: this.opts.deviceFlag ?? 1,
          clientTimestamp: Date.now(),
        }).then(
          (result) => {
            this.isConnected = true;
            this.emit('connect', result);
            settled = true;
            resolve();
          },
          (error: unknown) => {
            this.emit('error', error);
            settled = true;
            reject(error);
            this.localDisconnect('Authentication failed');
          },
        );
      });
      ws.on('message', (data) => this.onMessage(data.toString()));
      ws.on('close', (code, reason) => {
        if (!settled && !this.isConnected) reject(new Error(`Connection closed before authentication (Code: ${code})`));
        settled = true;
        this.isConnected = false;
        this.emit('disconnect', { code, reason: reason.toString() });
      });
    });
  }

  send(channelId: string, channelType: number, payload: object): Promise<unknown> {
    if (!this.isConnected) return Promise.reject(new Error('Not connected. Call connect() first.'));
    return this.request('send', {
      clientMsgNo: randomUUID(),
      channelId,
      channelType,
      payload: Buffer.from(JSON.stringify(payload)).toString('base64'),
      header: { redDot: true },
    });
  }

  close(): void {
    this.localDisconnect('Manual disconnection');
  }

  private request(method: string, params: unknown): Promise<unknown> {
    const id = randomUUID();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.ws!.send(JSON.stringify({ method, params, id }));
    });
  }

  private onMessage(text: string): void {
    const m = JSON.parse(text) as { id?: string; method?: string; params?: Record<string, unknown>; result?: unknown; error?: unknown };
    if ('id' in m && m.id !== undefined && m.method === undefined) {
      const p = this.pending.get(m.id!);
      if (!p) return;
      this.pending.delete(m.id!);
      if (m.error) p.reject(m.error);
      else p.resolve(m.result);
      return;
    }
    if (m.method === 'recv') {
      this.emit('message', m.params);
      this.ws?.send(
        JSON.stringify({
          method: 'recvack',
          params: { header: m.params?.header, messageId: m.params?.messageId, messageSeq: m.params?.messageSeq },
        }),
      );
    } else if (m.method === 'disconnect') {
      this.emit('disconnect', m.params);
      this.localDisconnect('Server disconnected');
    }
  }

  private localDisconnect(_why: string): void {
    this.isConnected = false;
    for (const p of this.pending.values()) p.reject(new Error('disconnected'));
    this.pending.clear();
    if (this.ws && this.ws.readyState <= WebSocket.OPEN) this.ws.close();
  }

  private emit(event: string, value: unknown): void {
    this.events.push([event, value]);
    for (const fn of this.listeners.get(event) ?? []) fn(value);
  }
}
