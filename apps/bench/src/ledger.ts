/**
 * The generator's correctness bookkeeping: every message body names its stream
 * (one sender into one channel), its sequence number in that stream and its send
 * time, so each recipient can detect loss, duplicates and reordering and time
 * send→recv without trusting the server.
 */
import { Samples } from './stats.ts';

/** A message body: `<stream>|<n>|<send time, ms of performance.now()>`, padded to at least `size` bytes. */
export function encodeBody(stream: string, n: number, sentAt: number, size = 0): string {
  const text = `${stream}|${n}|${sentAt.toFixed(3)}|`;
  return text.length >= size ? text : text + 'x'.repeat(size - text.length);
}

/** The fields of a body made by {@link encodeBody}, or undefined when it is not one. */
export function decodeBody(body: string): { stream: string; n: number; sentAt: number } | undefined {
  const a = body.indexOf('|');
  const b = body.indexOf('|', a + 1);
  const c = body.indexOf('|', b + 1);
  if (a < 0 || b < 0 || c < 0) return undefined;
  return { stream: body.slice(0, a), n: Number(body.slice(a + 1, b)), sentAt: Number(body.slice(b + 1, c)) };
}

/** What one recipient has received of one stream: a bit per sequence number, and the highest. */
interface Track {
  seen: Uint32Array;
  max: number;
}

/** Marks `n` seen in `t`; returns false when it already was. */
function markSeen(t: Track, n: number): boolean {
  const word = n >>> 5;
  if (word >= t.seen.length) {
    const grown = new Uint32Array(Math.max(word + 1, t.seen.length * 2));
    grown.set(t.seen);
    t.seen = grown;
  }
  const bit = 1 << (n & 31);
  if ((t.seen[word]! & bit) !== 0) return false;
  t.seen[word]! |= bit;
  return true;
}

/** Counts of the correctness gates: all must be zero for a valid scenario. */
export interface LedgerVerdict {
  expected: number;
  received: number;
  lost: number;
  duplicates: number;
  outOfOrder: number;
  /** Bodies that were not the generator's (or arrived for a stream nobody expects there). */
  foreign: number;
}

/**
 * Expected and received messages per (stream, recipient). Streams are sent in
 * order by one sender, so a recipient must see each n once, increasing.
 */
export class Ledger {
  /** send→recv latency of every first delivery, ms. */
  readonly latency = new Samples();
  private readonly sent = new Map<string, number>();
  private readonly recipients = new Map<string, string[]>();
  /** recipient → stream → track (two look-ups, no key string built per delivery). */
  private readonly tracks = new Map<string, Map<string, Track>>();
  private duplicates = 0;
  private outOfOrder = 0;
  private foreign = 0;
  private firstDeliveries = 0;

  /** Declares who receives `stream` (once, before sending). */
  expect(stream: string, recipients: readonly string[]): void {
    this.recipients.set(stream, [...recipients]);
    this.sent.set(stream, 0);
    for (const r of recipients) {
      let byStream = this.tracks.get(r);
      if (!byStream) this.tracks.set(r, (byStream = new Map()));
      byStream.set(stream, { seen: new Uint32Array(8), max: -1 });
    }
  }

  /** Allocates the next sequence number of `stream` (0, 1, 2, … in send order) and counts it as sent. */
  next(stream: string): number {
    const n = this.sent.get(stream) ?? 0;
    this.sent.set(stream, n + 1);
    return n;
  }

  /** Records one delivery of `body` to `recipient`, at `now` (performance.now()). */
  receive(recipient: string, body: string, now = performance.now()): void {
    const a = body.indexOf('|');
    const b = body.indexOf('|', a + 1);
    const c = body.indexOf('|', b + 1);
    const track = a >= 0 && b >= 0 && c >= 0 ? this.tracks.get(recipient)?.get(body.slice(0, a)) : undefined;
    const n = Number(body.slice(a + 1, b));
    if (!track || !Number.isInteger(n) || n < 0 || n > 0x7fff_ffff) {
      this.foreign++;
      return;
    }
    if (!markSeen(track, n)) {
      this.duplicates++;
      return;
    }
    if (n < track.max) this.outOfOrder++;
    else track.max = n;
    this.firstDeliveries++;
    this.latency.add(now - Number(body.slice(b + 1, c)));
  }

  /** Deliveries expected so far: for each stream, messages sent × recipients. */
  get expectedDeliveries(): number {
    let total = 0;
    for (const [stream, n] of this.sent) total += n * (this.recipients.get(stream)?.length ?? 0);
    return total;
  }

  /** First (non-duplicate) deliveries received so far. */
  get receivedDeliveries(): number {
    return this.firstDeliveries;
  }

  /** The loss/duplicate/order counts now. */
  verdict(): LedgerVerdict {
    const expected = this.expectedDeliveries;
    return {
      expected,
      received: this.firstDeliveries,
      lost: expected - this.firstDeliveries,
      duplicates: this.duplicates,
      outOfOrder: this.outOfOrder,
      foreign: this.foreign,
    };
  }
}

/**
 * Routes each delivery to the ledger of its phase, named by the second field
 * of its stream id (`<scenario>:<phase>:<n>`), so a late delivery of a
 * previous phase is counted there instead of as foreign in the current one.
 */
export class PhaseLedgers {
  private readonly byPhase = new Map<string, Ledger>();

  /** A fresh ledger for `phase`. */
  open(phase: string): Ledger {
    const ledger = new Ledger();
    this.byPhase.set(phase, ledger);
    return ledger;
  }

  /** Records one delivery to `recipient` in its phase's ledger (or as foreign in the newest one). */
  receive(recipient: string, body: string): void {
    const a = body.indexOf(':');
    const b = body.indexOf(':', a + 1);
    const phase = a >= 0 && b > a ? body.slice(a + 1, b) : '';
    (this.byPhase.get(phase) ?? [...this.byPhase.values()].at(-1))?.receive(recipient, body);
  }
}
