import { randomBytes } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** The part of a WebSocket this needs: `ws`'s class in Node 20, the global one in Electron. */
export interface SocketLike {
  send(data: string): void;
  close(): void;
  addEventListener(type: 'open' | 'message' | 'close' | 'error', listener: (ev: object) => void): void;
}
export type SocketFactory = (url: string) => SocketLike;

/** Longest wait for a gateway's answer to `connect`, ms. */
const CONNECT_TIMEOUT_MS = 5_000;

/** What one JSON-RPC `connect` came to. */
export type ConnectOutcome = { connected: true } | { connected: false; reason: string };

/**
 * One JSON-RPC `connect` on a gateway WebSocket (the first and only request),
 * then close. Connected means `result.reasonCode` 1; anything else (an error
 * object, another reason code, a close, a timeout) means refused.
 */
export function tryConnect(
  socket: SocketFactory,
  url: string,
  cred: { uid: string; token: string; device_flag: number },
): Promise<ConnectOutcome> {
  return new Promise((resolve) => {
    let ws: SocketLike;
    let settled = false;
    const finish = (o: ConnectOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      try {
        ws.close();
      } catch {
        // already closed
      }
      resolve(o);
    };
    const timer = setTimeout(() => finish({ connected: false, reason: `no answer within ${CONNECT_TIMEOUT_MS} ms` }), CONNECT_TIMEOUT_MS);
    try {
      ws = socket(url);
    } catch (err) {
      clearTimeout(timer);
      resolve({ connected: false, reason: `cannot open ${url}: ${(err as Error).message}` });
      return;
    }
    ws.addEventListener('open', () => {
      const params = {
        uid: cred.uid,
        token: cred.token,
        deviceFlag: cred.device_flag,
        deviceId: 'parley-console-acceptance',
        clientTimestamp: Date.now(),
      };
      ws.send(JSON.stringify({ method: 'connect', params, id: 'acceptance-1' }));
    });
    ws.addEventListener('message', (event) => {
      const ev = event as { data?: unknown };
      let frame: { id?: unknown; result?: { reasonCode?: unknown }; error?: { code?: unknown; message?: unknown } };
      try {
        frame = JSON.parse(typeof ev.data === 'string' ? ev.data : Buffer.from(ev.data as ArrayBuffer).toString('utf8')) as typeof frame;
      } catch {
        return;
      }
      if (frame.id !== 'acceptance-1') return;
      if (frame.result?.reasonCode === 1) finish({ connected: true });
      else if (frame.error) finish({ connected: false, reason: `error ${String(frame.error.code)}: ${String(frame.error.message)}` });
      else finish({ connected: false, reason: `reason code ${String(frame.result?.reasonCode)}` });
    });
    ws.addEventListener('close', () => finish({ connected: false, reason: 'the gateway closed the connection' }));
    ws.addEventListener('error', () => finish({ connected: false, reason: `cannot connect to ${url}` }));
  });
}

/** A credential of the archive (the token stays in the host). */
export interface ArchivedCredential {
  uid: string;
  token: string;
  device_flag: number;
}

async function* lines(file: string): AsyncGenerator<Record<string, unknown>> {
  const rl = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  for await (const line of rl) {
    if (line.trim() === '') continue;
    try {
      yield JSON.parse(line) as Record<string, unknown>;
    } catch {
      // not a record line; the archive's own checks are parleyctl's business
    }
  }
}

/** Candidate (uid, device_flag) pairs followed through the credentials file; bounds memory on a large archive. */
const CANDIDATES = 64;

/**
 * An original credential the target must accept: from the archive's
 * credentials, of a user v2 had not banned, and the device the target keeps
 * for that (uid, device_flag), the one with the smallest v2 device id, with
 * a non-empty token. Undefined when the archive holds none.
 */
export async function pickCredential(archive: string): Promise<ArchivedCredential | undefined> {
  const creds = join(archive, 'records', 'credentials.jsonl');
  if (!existsSync(creds)) return undefined;
  const banned = new Set<string>();
  const channels = join(archive, 'records', 'channels.jsonl');
  if (existsSync(channels)) {
    for await (const c of lines(channels)) if (c.channel_type === 1 && c.ban === true) banned.add(String(c.channel_id));
  }
  const kept = new Map<string, ArchivedCredential & { id: bigint }>();
  for await (const r of lines(creds)) {
    if (typeof r.uid !== 'string' || typeof r.token !== 'string' || typeof r.device_flag !== 'number' || banned.has(r.uid)) continue;
    let id: bigint;
    try {
      id = BigInt(String(r.v2_device_id));
    } catch {
      continue;
    }
    const key = JSON.stringify([r.uid, r.device_flag]);
    const prev = kept.get(key);
    if (prev ? id < prev.id : kept.size < CANDIDATES) kept.set(key, { uid: r.uid, token: r.token, device_flag: r.device_flag, id });
  }
  const pick = [...kept.values()].find((c) => c.token !== '');
  return pick && { uid: pick.uid, token: pick.token, device_flag: pick.device_flag };
}

/** A token no device has: random, the same length class as real ones. */
export function wrongToken(): string {
  return randomBytes(16).toString('hex');
}
