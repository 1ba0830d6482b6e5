import { connect, ErrorCode, Events, type Msg, type NatsConnection, type NatsError, type Subscription } from 'nats';
import type { Logger } from 'pino';

/** Largest message the bus sends, bytes (NATS' default max_payload is 1 MiB). */
export const MAX_BUS_MESSAGE_BYTES = 1_000_000;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Why a request over the bus got no answer. */
export class BusRequestError extends Error {
  constructor(
    readonly kind: 'no_responders' | 'timeout' | 'closed' | 'failed',
    message: string,
  ) {
    super(message);
    this.name = 'BusRequestError';
  }
}

function requestError(err: unknown): BusRequestError {
  const code = (err as NatsError | undefined)?.code;
  if (code === ErrorCode.NoResponders) return new BusRequestError('no_responders', 'no node answers on that subject');
  if (code === ErrorCode.Timeout) return new BusRequestError('timeout', 'request timed out');
  if (code === ErrorCode.ConnectionClosed || code === ErrorCode.ConnectionDraining) return new BusRequestError('closed', 'bus closed');
  return new BusRequestError('failed', (err as Error).message);
}

/** A bus message's body, decoded; a handler answers a request by returning a value (or a promise of one). */
export type BusHandler = (body: unknown, msg: Msg) => unknown;

/**
 * The node-to-node bus: one NATS connection, JSON bodies, every subject under
 * `parley.<cluster.id>.` so that clusters (and test runs) sharing one NATS
 * never see each other. Reconnects forever; `connected` says whether it is up
 * now (readiness).
 */
export class Bus {
  private readonly subs: Subscription[] = [];
  private up = true;

  private constructor(
    private readonly nc: NatsConnection,
    readonly prefix: string,
    readonly log: Logger,
  ) {
    void this.watch();
  }

  /** Connects to `servers` (waits at most `timeoutMs` for the first connection). */
  static async connect(servers: string[], clusterId: string, nodeName: string, log: Logger, timeoutMs = 5000): Promise<Bus> {
    let nc: NatsConnection;
    try {
      nc = await connect({
        servers,
        name: `parley ${clusterId} ${nodeName}`,
        timeout: timeoutMs,
        reconnect: true,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 250,
        pingInterval: 10_000,
      });
    } catch (err) {
      // The server list is not repeated: a URL may carry credentials.
      throw new Error(`cannot connect to NATS (cluster.nats_url): ${(err as Error).message}`, { cause: err });
    }
    return new Bus(nc, `parley.${clusterId}.`, log);
  }

  private async watch(): Promise<void> {
    for await (const s of this.nc.status()) {
      if (s.type === Events.Disconnect) {
        this.up = false;
        this.log.warn('cluster bus disconnected from NATS; reconnecting');
      } else if (s.type === Events.Reconnect) {
        this.up = true;
        this.log.info('cluster bus reconnected to NATS');
      }
    }
  }

  /** Whether the connection to NATS is up. */
  get connected(): boolean {
    return this.up && !this.nc.isClosed();
  }

  subject(...parts: Array<string | number>): string {
    return this.prefix + parts.join('.');
  }

  private encode(body: unknown): Uint8Array {
    const data = encoder.encode(JSON.stringify(body));
    if (data.length > MAX_BUS_MESSAGE_BYTES) throw new RangeError(`bus message of ${data.length} bytes exceeds ${MAX_BUS_MESSAGE_BYTES}`);
    return data;
  }

  publish(subject: string, body: unknown): void {
    if (this.nc.isClosed()) return;
    this.nc.publish(subject, this.encode(body));
  }

  /** Sends a request and waits for the first answer (decoded), at most `timeoutMs`. */
  async request(subject: string, body: unknown, timeoutMs: number): Promise<unknown> {
    let reply: Msg;
    try {
      reply = await this.nc.request(subject, this.encode(body), { timeout: Math.max(1, Math.round(timeoutMs)) });
    } catch (err) {
      throw requestError(err);
    }
    return JSON.parse(decoder.decode(reply.data));
  }

  /**
   * Calls `handler` for every message on `subject` (with `queue`, one member
   * of the group gets each). A message with a reply subject is answered with
   * what the handler returns; a handler that throws answers `{ error }`.
   */
  subscribe(subject: string, handler: BusHandler, queue?: string): void {
    const sub = this.nc.subscribe(subject, {
      ...(queue ? { queue } : {}),
      callback: (err, msg) => {
        if (err) {
          this.log.warn({ err, subject }, 'cluster bus subscription failed');
          return;
        }
        let body: unknown;
        try {
          body = JSON.parse(decoder.decode(msg.data));
        } catch {
          this.log.warn({ subject }, 'cluster bus message is not JSON; dropped');
          return;
        }
        void this.handle(handler, body, msg, subject);
      },
    });
    this.subs.push(sub);
  }

  private async handle(handler: BusHandler, body: unknown, msg: Msg, subject: string): Promise<void> {
    try {
      const answer = await handler(body, msg);
      if (msg.reply) msg.respond(this.encode(answer ?? null));
    } catch (err) {
      this.log.error({ err, subject }, 'cluster bus handler failed');
      if (msg.reply) msg.respond(this.encode({ error: (err as Error).message }));
    }
  }

  /** Round trip to the NATS server (all earlier publishes are flushed). */
  async flush(): Promise<void> {
    await this.nc.flush();
  }

  /** Unsubscribes, delivers what is pending, and closes. */
  async close(): Promise<void> {
    if (this.nc.isClosed()) return;
    try {
      await this.nc.drain();
    } catch {
      await this.nc.close();
    }
  }
}
