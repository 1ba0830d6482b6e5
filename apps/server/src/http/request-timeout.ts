import type { Server } from 'node:http';

/**
 * How often a Node HTTP server should look for requests past their time limit, ms. Node
 * enforces `headersTimeout` and `requestTimeout` only when it checks its connections, every
 * 30 s by default, so a request limited to 1 s could live 31 s. A quarter of the limit, from
 * 250 ms to 1 s: a check visits every connection the server accepted (upgraded WebSockets
 * too), ~0.2 ms per 10,000 (measured).
 */
function connectionCheckIntervalMs(limitMs: number): number {
  return Math.min(1000, Math.max(250, Math.floor(limitMs / 4)));
}

/**
 * Bounds how long one request may take to arrive on `server` (headers and body): a slower
 * one is answered 408 and its connection closed. Call before the server listens (Node reads
 * the check interval when listening starts).
 */
export function boundRequestTime(server: Server, limitMs: number): void {
  server.headersTimeout = limitMs;
  server.requestTimeout = limitMs;
  // Read by Node when listening starts; not in @types/node's Server.
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = connectionCheckIntervalMs(limitMs);
}
