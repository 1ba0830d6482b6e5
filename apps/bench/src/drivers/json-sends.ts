/**
 * What the generator's two JSON-over-WebSocket connections share (Parley's
 * JSON-RPC, `jsonrpc-conn.ts`, and the calibration loop's, `ref-im.ts`): a
 * connect that fails once, on its time limit or the first error, and the
 * `send` requests in flight, numbered, each settled by the result carrying
 * its id and all failed when the connection closes.
 */
import type { WsClient } from './ws-client.ts';
import type { Destination } from './types.ts';

interface Waiting {
  resolve: () => void;
  reject: (e: Error) => void;
}

/**
 * A connect's one failure: after `timeoutMs` it fails with `timedOut()`; `fail` stops the time limit,
 * drops the socket `socket()` names and rejects (a second failure rejects a promise already
 * settled: nothing happens); `opened` stops the time limit once the connect succeeded.
 */
export function connectLimit(
  timeoutMs: number,
  timedOut: () => Error,
  socket: () => WsClient,
  reject: (e: Error) => void,
): { fail(e: Error): void; opened(): void } {
  const timer = setTimeout(() => fail(timedOut()), timeoutMs);
  const fail = (e: Error): void => {
    clearTimeout(timer);
    socket().terminate();
    reject(e);
  };
  return { fail, opened: () => clearTimeout(timer) };
}

/** The `send` requests of one connection (`jsonrpc`: with the JSON-RPC 2.0 member, as Parley's are). */
export class JsonSends {
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;

  constructor(
    private readonly socket: WsClient,
    private readonly uid: string,
    private readonly jsonrpc: boolean,
  ) {}

  /** Sends `body` to `to` as the next request; resolves on its result. */
  send(to: Destination, body: string): Promise<void> {
    const id = this.nextId++;
    const done = new Promise<void>((resolve, reject) => this.waiting.set(id, { resolve, reject }));
    const params = { clientMsgNo: `${this.uid}-${id}`, channelId: to.id, channelType: to.kind === 'user' ? 1 : 2, payload: { b: body } };
    this.socket.sendText(
      this.jsonrpc ? JSON.stringify({ jsonrpc: '2.0', method: 'send', id, params }) : JSON.stringify({ method: 'send', id, params }),
    );
    return done;
  }

  /** The result of request `id` (`text`, the whole frame) arrived: `ok` resolves it, else it fails saying what came. Unknown ids are ignored. */
  settle(id: number, ok: boolean, text: string): void {
    const w = this.waiting.get(id);
    if (!w) return;
    this.waiting.delete(id);
    if (ok) w.resolve();
    else w.reject(new Error(`send refused: ${text.slice(0, 200)}`));
  }

  /** The connection closed: every request in flight fails. */
  closed(): void {
    for (const w of this.waiting.values()) w.reject(new Error('connection closed'));
    this.waiting.clear();
  }
}
