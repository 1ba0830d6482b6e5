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

interface Track {
  seen: Set<number>;
  max: number;
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
  private readonly tracks = new Map<string, Track>();
  private duplicates = 0;
  private outOfOrder = 0;
  private foreign = 0;
  private firstDeliveries = 0;

  /** Declares who receives `stream` (once, before sending). */
  expect(stream: string, recipients: readonly string[]): void {
    this.recipients.set(stream, [...recipients]);
    this.sent.set(stream, 0);
    for (const r of recipients) this.tracks.set(`${stream}>${r}`, { seen: new Set(), max: -1 });
  }

  /** Allocates the next sequence number of `stream` (0, 1, 2, … in send order) and counts it as sent. */
  next(stream: string): number {
    const n = this.sent.get(stream) ?? 0;
    this.sent.set(stream, n + 1);
    return n;
  }

  /** Records one delivery of `body` to `recipient`, at `now` (performance.now()). */
  receive(recipient: string, body: string, now = performance.now()): void {
    const d = decodeBody(body);
    const track = d && this.tracks.get(`${d.stream}>${recipient}`);
    if (!d || !track) {
      this.foreign++;
      return;
    }
    if (track.seen.has(d.n)) {
      this.duplicates++;
      return;
    }
    if (d.n < track.max) this.outOfOrder++;
    else track.max = d.n;
    track.seen.add(d.n);
    this.firstDeliveries++;
    this.latency.add(now - d.sentAt);
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
