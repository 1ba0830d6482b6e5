/**
 * Byte-stream transports for {@link WkprotoClient}: raw TCP (`tcp://host:port`)
 * or a WebSocket (`ws://…`, binary frames; the `ws` package is loaded lazily
 * so servers that only decode never load it).
 */
import { Buffer } from 'node:buffer';
import { connect as netConnect, type Socket } from 'node:net';
import { DirectWriter, takeReads } from '../net/direct-write.ts';
import { joinReadGroup, leaveReadGroup, type ReadGroup } from '../net/read-pump.ts';
import { handleOf } from '../net/handle.ts';

/** A duplex byte pipe with close notification. */
export interface ClientTransport {
  /** Writes `frame`: true when it is written and its bytes may be reused, false when the transport holds it until it is. */
  write(frame: Uint8Array): boolean;
  close(): void;
  /**
   * Registers the single data handler (chunks in arrival order): the chunk is
   * `length` bytes of `chunk` from `start` on (a shared read buffer is passed
   * whole, with where the read lies in it).
   */
  onData(handler: DataHandler): void;
  /** Registers the single close handler; `error` is set when the pipe failed. */
  onClose(handler: (error?: Error) => void): void;
  /** The pipe's state in a few words, for an error report (a TCP socket's local port and byte counts). */
  describe(): string;
  /** The local TCP port (undefined over WebSocket or once closed). */
  readonly localPort: number | undefined;
  /**
   * TCP with reads from the read pump only: the socket's reads go to
   * `group`'s call under `key` from now on (see net/read-pump.ts); false
   * when they cannot (the socket is not pumped).
   */
  joinReadGroup?(group: ReadGroup, key: number): boolean;
  /** The socket's reads go to the data handler again. */
  leaveReadGroup?(): void;
  /**
   * TCP with direct writes: the socket's descriptor while nothing is queued
   * for it (a write of its own then goes out in order), else -1.
   */
  idleDescriptor?(): number;
}

type DataHandler = (chunk: Buffer, length: number, start: number) => void;

/**
 * A TCP transport. With `direct` (the `reuseReadBuffer` option), reads are
 * taken from the socket's handle before Node's Readable and land in a
 * buffer shared by every such socket (`takeReads`): each is handed on whole
 * with where the read lies in it and is valid only during the handler's call. Frames
 * are then written straight to the handle while nothing is queued
 * (`DirectWriter`), without the Writable's bookkeeping and its tick after
 * every write; a frame libuv could not finish at once is held until it is
 * written, so a caller must not reuse a buffer it has written.
 */
class TcpTransport implements ClientTransport {
  private closeHandler: ((error?: Error) => void) | undefined;
  private lastError: Error | undefined;
  private dataHandler: DataHandler | undefined;
  private readonly writer: DirectWriter | undefined;

  /**
   * A class, not an object literal: a literal's `localPort` getter closes over
   * its socket, so every transport had a map of its own and the clients'
   * `transport.write` look-up was megamorphic (a generic IC call per write).
   */
  constructor(
    private readonly socket: Socket,
    private readonly direct: boolean,
  ) {
    socket.setNoDelay(true);
    socket.on('error', (e) => {
      this.lastError = e;
    });
    socket.on('close', () => this.closeHandler?.(this.lastError));
    this.writer = direct ? new DirectWriter(socket) : undefined;
    // Until `onData` the socket does not flow: the handle path takes nothing and the Readable keeps what comes.
    if (direct) takeReads(socket, (buf, start, n) => (this.dataHandler!(buf, n, start), true));
  }

  write(frame: Uint8Array): boolean {
    if (this.writer !== undefined) return this.writer.write(frame);
    this.socket.write(frame);
    return false;
  }

  close(): void {
    this.socket.destroy();
  }

  onData(handler: DataHandler): void {
    this.dataHandler = handler;
    // Every read the handle path does not take (a paused socket, one that buffered) comes here, in order.
    this.socket.on('data', (chunk: Buffer) => handler(chunk, chunk.length, 0));
  }

  onClose(handler: (error?: Error) => void): void {
    this.closeHandler = handler;
  }

  describe(): string {
    const socket = this.socket;
    return `tcp local port ${socket.localPort ?? '-'}, ${socket.bytesWritten} bytes written, ${socket.bytesRead} read${socket.destroyed ? ', destroyed' : ''}`;
  }

  get localPort(): number | undefined {
    return this.socket.localPort;
  }

  joinReadGroup(group: ReadGroup, key: number): boolean {
    return this.direct && joinReadGroup(this.socket, group, key);
  }

  leaveReadGroup(): void {
    leaveReadGroup(this.socket);
  }

  idleDescriptor(): number {
    const w = this.writer;
    const fd = handleOf<{ fd?: number }>(this.socket)?.fd;
    return w !== undefined && w.pending === 0 && this.socket.writableLength === 0 && typeof fd === 'number' && fd >= 0 ? fd : -1;
  }
}

/** Options of {@link openTransport}. */
export interface TransportOptions {
  /**
   * TCP only: take reads from the socket's handle into one buffer shared by
   * all such transports, instead of a fresh buffer and a stream `data` event
   * per read, and write frames straight to the handle (see `tcpTransport`).
   * Each chunk is then valid only during the data handler's call.
   */
  reuseReadBuffer?: boolean;
}

/** Opens a transport to `url` (`tcp://host:port`, `ws://host:port/…` or `wss://…`); rejects on failure or timeout. */
export async function openTransport(url: string, timeoutMs: number, options: TransportOptions = {}): Promise<ClientTransport> {
  const parsed = new URL(url);
  if (parsed.protocol === 'tcp:') {
    const socket = netConnect({ host: parsed.hostname, port: Number(parsed.port) });
    await withTimeout(
      new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve);
        socket.once('error', reject);
      }),
      timeoutMs,
      () => socket.destroy(),
      `TCP connect to ${url}`,
    );
    return new TcpTransport(socket, options.reuseReadBuffer === true);
  }
  if (parsed.protocol !== 'ws:' && parsed.protocol !== 'wss:') throw new Error(`unsupported WKProto URL ${url}`);
  const { WebSocket } = await import('ws');
  const ws = new WebSocket(url);
  await withTimeout(
    new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    }),
    timeoutMs,
    () => ws.terminate(),
    `WebSocket connect to ${url}`,
  );
  let closeHandler: ((error?: Error) => void) | undefined;
  let lastError: Error | undefined;
  ws.on('error', (e) => {
    lastError = e;
  });
  ws.on('close', () => closeHandler?.(lastError));
  return {
    write: (frame) => (ws.send(frame, { binary: true }), false),
    close: () => ws.terminate(),
    onData: (handler) => {
      ws.on('message', (data: Buffer | ArrayBuffer | Buffer[]) => {
        if (Array.isArray(data)) for (const part of data) handler(part, part.length, 0);
        else {
          const chunk = Buffer.isBuffer(data) ? data : Buffer.from(data);
          handler(chunk, chunk.length, 0);
        }
      });
    },
    onClose: (handler) => {
      closeHandler = handler;
    },
    describe: () => `websocket readyState ${ws.readyState}, ${ws.bufferedAmount} bytes buffered`,
    localPort: undefined,
  };
}

/** Races `p` against a timer; on timeout runs `onTimeout` and rejects. */
export async function withTimeout<T>(p: Promise<T>, ms: number, onTimeout: () => void, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout();
      reject(new Error(`${what} timed out after ${ms} ms`));
    }, ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
