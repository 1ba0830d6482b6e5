import { WebSocket } from 'ws';
import { decodeJsonRpc, type JsonRpcErrorObject, type JsonRpcFrame } from './frame.ts';

/** A response to one request: exactly one of `result` and `error`. */
export interface RpcResponse {
  id: string | number | null;
  result?: unknown;
  error?: JsonRpcErrorObject;
}

export interface RpcNotification {
  method: string;
  params: Record<string, unknown>;
}

/**
 * A minimal JSON-RPC-over-WebSocket client for tests and the benchmark:
 * requests resolve with their response (matched by id), notifications queue
 * until read. Text frames only; no reconnection.
 */
export class JsonRpcClient {
  private nextId = 1;
  private readonly waiting = new Map<string | number, (r: RpcResponse) => void>();
  private readonly notes: RpcNotification[] = [];
  private readonly noteWaiters: Array<{ method?: string; resolve: (n: RpcNotification) => void }> = [];
  /** Responses with an id no request is waiting for (e.g. id null errors). */
  readonly orphans: RpcResponse[] = [];
  /** Settles when the socket closes, with the close code and reason. */
  readonly closed: Promise<{ code: number; reason: string }>;

  private constructor(readonly socket: WebSocket) {
    this.closed = new Promise((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    socket.on('message', (data) => this.onMessage(data.toString()));
  }

  static open(url: string): Promise<JsonRpcClient> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      socket.once('open', () => resolve(new JsonRpcClient(socket)));
      socket.once('error', reject);
    });
  }

  /** Sends a request and waits for its response. */
  request(method: string, params?: unknown): Promise<RpcResponse> {
    const id = `r${this.nextId++}`;
    const done = new Promise<RpcResponse>((resolve) => this.waiting.set(id, resolve));
    this.sendRaw(JSON.stringify({ jsonrpc: '2.0', method, params, id }));
    return done;
  }

  notify(method: string, params: unknown): void {
    this.sendRaw(JSON.stringify({ jsonrpc: '2.0', method, params }));
  }

  /** Sends any text as one frame (for malformed-input tests). */
  sendRaw(text: string | Buffer): void {
    this.socket.send(text);
  }

  /** The next notification (optionally of one method), waiting up to `timeoutMs`. */
  nextNotification(method?: string, timeoutMs = 5000): Promise<RpcNotification> {
    const i = this.notes.findIndex((n) => method === undefined || n.method === method);
    if (i >= 0) return Promise.resolve(this.notes.splice(i, 1)[0]!);
    return new Promise((resolve, reject) => {
      const waiter = { method, resolve };
      this.noteWaiters.push(waiter);
      setTimeout(() => {
        const at = this.noteWaiters.indexOf(waiter);
        if (at >= 0) {
          this.noteWaiters.splice(at, 1);
          reject(new Error(`no ${method ?? 'notification'} within ${timeoutMs} ms`));
        }
      }, timeoutMs).unref();
    });
  }

  /** Notifications received and not yet read. */
  pending(method?: string): RpcNotification[] {
    return this.notes.filter((n) => method === undefined || n.method === method);
  }

  close(): void {
    this.socket.close();
  }

  private onMessage(text: string): void {
    let frame: JsonRpcFrame;
    try {
      frame = decodeJsonRpc(text);
    } catch {
      return;
    }
    if (frame.kind === 'response') {
      const r: RpcResponse = { id: frame.id, result: frame.result, error: frame.error };
      const resolve = frame.id === null ? undefined : this.waiting.get(frame.id);
      if (resolve && frame.id !== null) {
        this.waiting.delete(frame.id);
        resolve(r);
      } else this.orphans.push(r);
      return;
    }
    const note = { method: frame.method, params: (frame.params ?? {}) as Record<string, unknown> };
    const at = this.noteWaiters.findIndex((w) => w.method === undefined || w.method === note.method);
    if (at >= 0) this.noteWaiters.splice(at, 1)[0]!.resolve(note);
    else this.notes.push(note);
  }
}
