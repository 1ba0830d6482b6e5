import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One POST as the receiver saw it. */
export interface Received {
  event: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** `Date.now()` when the body had arrived. */
  at: number;
}

/** What the receiver answers the n-th request (0-based) with: a status, or 'hang' to never answer. */
export type Answer = (n: number, r: Received) => number | 'hang';

/** A real `node:http` webhook receiver on 127.0.0.1 with an ephemeral port. */
export interface Receiver {
  url: string;
  received: Received[];
  /** Resolves once `count` requests for `event` have arrived (or rejects after `timeoutMs`). */
  waitFor(event: string, count?: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(answer: Answer = () => 200): Promise<Receiver> {
  const received: Received[] = [];
  const hung: ServerResponse[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const r: Received = {
        event: url.searchParams.get('event') ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
        at: Date.now(),
      };
      const n = received.push(r) - 1;
      const a = answer(n, r);
      if (a === 'hang') hung.push(res);
      else res.writeHead(a).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    async waitFor(event, count = 1, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const matching = received.filter((r) => r.event === event);
        if (matching.length >= count) return matching;
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`only ${matching.length}/${count} ${event} requests arrived`);
        await new Promise((resolve) => setTimeout(resolve, Math.min(left, 10)));
      }
    },
    async close() {
      for (const res of hung) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
