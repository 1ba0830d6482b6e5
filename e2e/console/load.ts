import type { Socket } from 'node:net';
import { WebSocket } from 'ws';

/** The TCP socket under a ws client (ws 8 keeps it as `_socket`): corked so one tick's frames leave in one write. */
function tcpOf(ws: WebSocket): Socket | undefined {
  const raw = (ws as unknown as { _socket?: Socket })._socket;
  return raw && typeof raw.cork === 'function' && typeof raw.uncork === 'function' ? raw : undefined;
}

/** One JSON-RPC session: connect, then sends answered by id; incoming recvs are acknowledged at once. */
class Session {
  private nextId = 1;
  private readonly waiting = new Map<string, (ok: boolean) => void>();
  private readonly tcp: Socket | undefined;
  private corked = false;

  private constructor(private readonly socket: WebSocket) {
    this.tcp = tcpOf(socket);
    socket.on('message', (data) => {
      const f = JSON.parse(data.toString()) as {
        id?: string;
        method?: string;
        result?: { reasonCode?: number };
        params?: { messageId?: string; messageSeq?: number };
      };
      if (f.method === 'recv') {
        this.write(
          JSON.stringify({
            jsonrpc: '2.0',
            method: 'recvack',
            params: { messageId: f.params?.messageId, messageSeq: f.params?.messageSeq },
          }),
        );
        return;
      }
      if (f.id === undefined) return;
      const done = this.waiting.get(f.id);
      this.waiting.delete(f.id);
      done?.(f.result?.reasonCode === 1);
    });
    socket.on('close', () => {
      for (const done of this.waiting.values()) done(false);
      this.waiting.clear();
    });
  }

  static async open(ws: string, uid: string, token: string): Promise<Session> {
    const socket = new WebSocket(ws);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    const s = new Session(socket);
    if (!(await s.call('connect', { uid, token, deviceFlag: 1, deviceId: `${uid}-dev`, clientTimestamp: Date.now() })))
      throw new Error(`connect ${uid} failed`);
    return s;
  }

  get closed(): boolean {
    return this.socket.readyState !== WebSocket.OPEN;
  }

  call(method: string, params: unknown): Promise<boolean> {
    if (this.socket.readyState !== WebSocket.OPEN) return Promise.resolve(false);
    const id = `q${this.nextId++}`;
    const done = new Promise<boolean>((resolve) => this.waiting.set(id, resolve));
    this.write(JSON.stringify({ jsonrpc: '2.0', method, params, id }));
    return done;
  }

  /**
   * Sends a frame; the frames of one turn of the event loop (a chunk's
   * recvacks, the sends its sendacks set off) share one socket write, as a
   * client under load would batch them, so the load costs this process less
   * than it costs the node.
   */
  private write(frame: string): void {
    if (this.tcp && !this.corked) {
      this.corked = true;
      this.tcp.cork();
      setImmediate(() => {
        this.corked = false;
        this.tcp!.uncork();
      });
    }
    this.socket.send(frame);
  }

  close(): void {
    this.socket.close();
  }
}

async function storeToken(api: string, uid: string, token: string): Promise<void> {
  const res = await fetch(`${api}/user/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ uid, token, device_flag: 1, device_level: 0 }),
  });
  if (!res.ok) throw new Error(`token for ${uid}: ${res.status}`);
}

export interface LoadOptions {
  /** Sending sessions (each to its own receiving peer, who is online and acknowledges). */
  senders: number;
  /** Sends kept in flight per sender: 1 is a steady trickle paced by `ratePerSec`, more is a burst. */
  inflight: number;
  /** Target sends per second across senders (ignored in a burst, which sends as fast as answered). */
  ratePerSec?: number;
  /** Hard stop, ms: load never outlives this. */
  maxMs: number;
}

/**
 * Real messaging load on one node over its JSON-RPC gateway (loopback only):
 * people sending to online peers who acknowledge. Bounded in time; stops by
 * itself after `maxMs` or on `stop()`.
 */
export class Load {
  sent = 0;
  acked = 0;
  private running = true;
  private readonly sessions: Session[] = [];
  private loops: Promise<void>[] = [];
  private readonly timer: NodeJS.Timeout;

  private constructor(opts: LoadOptions) {
    this.timer = setTimeout(() => (this.running = false), opts.maxMs);
  }

  static async start(node: { api: string; ws: string }, tag: string, opts: LoadOptions): Promise<Load> {
    const load = new Load(opts);
    for (let i = 0; i < opts.senders; i++) {
      const from = `${tag}-s${i}`;
      const to = `${tag}-r${i}`;
      await storeToken(node.api, from, 'tok');
      await storeToken(node.api, to, 'tok');
      const sender = await Session.open(node.ws, from, 'tok');
      load.sessions.push(sender, await Session.open(node.ws, to, 'tok'));
      const gapMs = opts.ratePerSec ? (1000 * opts.senders) / opts.ratePerSec : 0;
      for (let k = 0; k < opts.inflight; k++) load.loops.push(load.loop(sender, to, gapMs));
    }
    return load;
  }

  private async loop(s: Session, to: string, gapMs: number): Promise<void> {
    let n = 0;
    while (this.running) {
      this.sent++;
      const ok = await s.call('send', {
        channelId: to,
        channelType: 1,
        clientMsgNo: `${to}-${Date.now()}-${n++}-${Math.random()}`,
        payload: { type: 1, content: 'load' },
      });
      if (ok) this.acked++;
      else if (s.closed) break;
      if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    for (const s of this.sessions) s.close();
    await Promise.all(this.loops);
  }
}
