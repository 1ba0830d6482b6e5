/**
 * Byte-stream transports for {@link WkprotoClient}: raw TCP (`tcp://host:port`)
 * or a WebSocket (`ws://…`, binary frames; the `ws` package is loaded lazily
 * so servers that only decode never load it).
 */
import { connect as netConnect, type Socket } from 'node:net';

/** A duplex byte pipe with close notification. */
export interface ClientTransport {
  write(frame: Uint8Array): void;
  close(): void;
  /**
   * Registers the single data handler (chunks in arrival order): the chunk is
   * `chunk[0, length)` (a shared read buffer is passed whole, with the read's length).
   */
  onData(handler: (chunk: Buffer, length: number) => void): void;
  /** Registers the single close handler; `error` is set when the pipe failed. */
  onClose(handler: (error?: Error) => void): void;
  /** The pipe's state in a few words, for an error report (a TCP socket's local port and byte counts). */
  describe(): string;
  /** The local TCP port (undefined over WebSocket or once closed). */
  readonly localPort: number | undefined;
}

/**
 * The read buffer shared by every TCP transport opened with `reuseReadBuffer`:
 * each read lands in it and is handed on synchronously, so one is enough for
 * all connections (JavaScript runs one read callback at a time).
 */
let sharedReadBuffer: Buffer | undefined;
const SHARED_READ_BYTES = 64 * 1024;

type DataHandler = (chunk: Buffer, length: number) => void;

function tcpTransport(socket: Socket, reads?: { handler: DataHandler | undefined }): ClientTransport {
  let closeHandler: ((error?: Error) => void) | undefined;
  let lastError: Error | undefined;
  socket.setNoDelay(true);
  socket.on('error', (e) => {
    lastError = e;
  });
  socket.on('close', () => closeHandler?.(lastError));
  return {
    write: (frame) => void socket.write(frame),
    close: () => void socket.destroy(),
    onData: (handler) => {
      if (reads) reads.handler = handler;
      else socket.on('data', (chunk: Buffer) => handler(chunk, chunk.length));
    },
    onClose: (handler) => {
      closeHandler = handler;
    },
    describe: () =>
      `tcp local port ${socket.localPort ?? '-'}, ${socket.bytesWritten} bytes written, ${socket.bytesRead} read${socket.destroyed ? ', destroyed' : ''}`,
    get localPort() {
      return socket.localPort;
    },
  };
}

/** Options of {@link openTransport}. */
export interface TransportOptions {
  /**
   * TCP only: read into one buffer shared by all such transports (Node's
   * `onread`) instead of a fresh buffer and a stream `data` event per read.
   * Each chunk is then valid only during the data handler's call.
   */
  reuseReadBuffer?: boolean;
}

/** Opens a transport to `url` (`tcp://host:port`, `ws://host:port/…` or `wss://…`); rejects on failure or timeout. */
export async function openTransport(url: string, timeoutMs: number, options: TransportOptions = {}): Promise<ClientTransport> {
  const parsed = new URL(url);
  if (parsed.protocol === 'tcp:') {
    const reads = options.reuseReadBuffer ? { handler: undefined as DataHandler | undefined } : undefined;
    const socket = reads
      ? netConnect({
          host: parsed.hostname,
          port: Number(parsed.port),
          onread: {
            buffer: () => (sharedReadBuffer ??= Buffer.allocUnsafe(SHARED_READ_BYTES)),
            // `buf` is the shared buffer itself: handed on whole with the read's length (no view per read).
            callback: (n: number, buf: Uint8Array) => {
              reads.handler?.(buf as Buffer, n);
              return true;
            },
          },
        })
      : netConnect({ host: parsed.hostname, port: Number(parsed.port) });
    await withTimeout(
      new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve);
        socket.once('error', reject);
      }),
      timeoutMs,
      () => socket.destroy(),
      `TCP connect to ${url}`,
    );
    return tcpTransport(socket, reads);
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
    write: (frame) => ws.send(frame, { binary: true }),
    close: () => ws.terminate(),
    onData: (handler) => {
      ws.on('message', (data: Buffer | ArrayBuffer | Buffer[]) => {
        if (Array.isArray(data)) for (const part of data) handler(part, part.length);
        else {
          const chunk = Buffer.isBuffer(data) ? data : Buffer.from(data);
          handler(chunk, chunk.length);
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
