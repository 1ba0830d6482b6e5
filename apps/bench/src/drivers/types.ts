/**
 * The one driver interface every target implements, so each scenario runs the
 * same code against mosquitto (MQTT) and Parley (JSON-RPC or WKProto).
 */
import type { WriterReading } from '../writer-timings.ts';

/**
 * The targets of a run: the peer, Parley through its two protocols, the calibration loop (S1 only),
 * and a Parley cluster (`--cluster` only).
 */
export type TargetName = 'mosquitto' | 'parley-jsonrpc' | 'parley-wkproto' | 'ref-im' | 'parley-cluster';

/** Where a message goes: one user's inbox (1:1) or a group every member receives. */
export interface Destination {
  kind: 'user' | 'group';
  id: string;
}

/**
 * Where one user's deliveries (and a catch-up's rows) go: as text, or (where
 * a driver has the bytes of a body at hand, as MQTT and WKProto do) as
 * `buf[start, end)`, the body's UTF-8, read during the call only. The
 * ledger's `RecipientLedger` is one.
 */
export interface Deliveries {
  text(body: string): void;
  bytes(buf: Uint8Array, start: number, end: number): void;
}

/** Deliveries nobody looks at (a connection that only sends, the storm's). */
export const IGNORED: Deliveries = { text: () => undefined, bytes: () => undefined };

/** An authenticated client connection of one user. */
export interface Connection {
  /** Sends one message; resolves at the server's acknowledgement (SENDACK, JSON-RPC result, PUBACK), rejects on refusal. */
  send(to: Destination, body: string): Promise<void>;
  /** Closes the connection (does not wait for the server). */
  close(): void;
}

/** A started target: its server process and how to drive it. */
export interface Driver {
  readonly name: TargetName;
  /** The server process id, for CPU and RSS from /proc. */
  readonly pid: number;
  /** What an acknowledgement means on this target (durability), for the report. */
  readonly durability: string;
  /** Makes `uids` able to authenticate (Parley: stores tokens over HTTP; mosquitto: already in its password file). */
  provisionUsers(uids: readonly string[]): Promise<void>;
  /**
   * Creates a group channel whose `members` receive every message sent to it;
   * `publishers` may send to it but receive nothing (on Parley they are members too).
   */
  createGroup(id: string, members: readonly string[], publishers: readonly string[]): Promise<void>;
  /** Opens and authenticates one connection of `uid`; `deliveries` sees every delivery to it. */
  connect(uid: string, deliveries: Deliveries): Promise<Connection>;
  /**
   * Makes in advance, on the generator's side, what each of the next `count` connects would
   * otherwise make for itself and the server never sees (Parley's WKProto: the client's X25519
   * key pair, one per connection, never reused), so that a measured storm's generator CPU is the
   * connects' own work; says what it made (undefined: nothing to make for this target). Connects
   * beyond `count` make their own as before.
   */
  prepareConnects?(count: number): string | undefined;
  /** Prepares `uid` to accumulate messages while offline (MQTT: a persistent QoS 1 session; Parley: nothing). */
  prepareOffline(uid: string): Promise<void>;
  /**
   * Fetches the `expected` messages `uid` missed from `fromUid` (Parley: HTTP
   * /channel/messagesync pages; MQTT: reconnecting its persistent session), each row into `rows`.
   */
  catchUp(uid: string, fromUid: string, expected: number, rows: Deliveries): Promise<void>;
  /**
   * Alerts the server raised since it started, by severity (Parley: its
   * `/top/v1/snapshot`, active and recent); undefined where it has none.
   */
  alerts?(): Promise<Record<string, number>>;
  /**
   * The store writer's commits, and its pauses beside them by reason, since the server started
   * (Parley's `/metrics` on the embedded store); undefined where there are none to read.
   */
  writerTimings?(): Promise<WriterReading | undefined>;
  /** Stops the server and removes its temp files. */
  stop(): Promise<void>;
}
