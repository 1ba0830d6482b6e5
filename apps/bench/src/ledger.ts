/**
 * The generator's correctness bookkeeping: every message body names its stream
 * (one sender into one channel), its sequence number in that stream and its send
 * time, so each recipient can detect loss, duplicates and reordering and time
 * send→recv without trusting the server.
 */
import { performance } from 'node:perf_hooks';
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
export interface Track {
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
      // Two words to begin with, grown by doubling: a warm-up's short streams grow it too (see Samples).
      byStream.set(stream, { seen: new Uint32Array(2), max: -1 });
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
    // Empty fields would read as 0 (Number('') is 0): they make a body foreign, as does a send time that is no number.
    const n = b > a + 1 ? Number(body.slice(a + 1, b)) : Number.NaN;
    const sentAt = c > b + 1 ? Number(body.slice(b + 1, c)) : Number.NaN;
    if (!track || !Number.isInteger(n) || n < 0 || n > 0x7fff_ffff || !Number.isFinite(sentAt)) {
      this.foreign++;
      return;
    }
    this.record(track, n, now - sentAt);
  }

  /**
   * The deliveries of one recipient, recorded from text or straight from
   * bytes (see {@link RecipientLedger}); create it once per connection.
   */
  recipient(uid: string): RecipientLedger {
    return new RecipientLedger(
      uid,
      () => this,
      (body) => this.receive(uid, body),
    );
  }

  /** The track of `stream` at `recipient`, undefined when nobody expects it there. */
  trackOf(recipient: string, stream: string): Track | undefined {
    return this.tracks.get(recipient)?.get(stream);
  }

  /** Counts a body that was not the generator's, or not expected at its recipient. */
  countForeign(): void {
    this.foreign++;
  }

  /** Records sequence number `n` (0 ≤ n ≤ 2^31 - 1) of `track`, delivered `latencyMs` after it was sent. */
  record(track: Track, n: number, latencyMs: number): void {
    if (!markSeen(track, n)) {
      this.duplicates++;
      return;
    }
    if (n < track.max) this.outOfOrder++;
    else track.max = n;
    this.firstDeliveries++;
    this.latency.add(latencyMs);
  }

  /** Deliveries recorded so far, first ones, duplicates and foreign ones alike. */
  get recordedDeliveries(): number {
    return this.firstDeliveries + this.duplicates + this.foreign;
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

const utf8 = new TextDecoder();
const BAR = 0x7c; // '|'
const DIGIT_0 = 0x30;
const DOT = 0x2e;

/**
 * One recipient's deliveries, fed either text bodies or the bytes of one
 * straight from a read buffer, recorded in the {@link Ledger} its stream
 * belongs to (`ledgerOf`: one ledger, or the ledger of the stream's phase).
 * The bytes path builds no string and no object per delivery: it parses the
 * sequence number and send time from the digits, and reuses the track (and
 * ledger) of the stream the recipient last received from while the stream's
 * bytes are the same (a catch-up, or one sender's burst, is one stream),
 * looking a stream up by name only when it changes.
 */
export class RecipientLedger {
  /** The bytes of the stream id last looked up, its ledger and track (undefined: none, look up again). */
  private lastStream = new Uint8Array(0);
  private lastLedger: Ledger | undefined;
  private lastTrack: Track | undefined;

  constructor(
    readonly uid: string,
    private readonly ledgerOf: (stream: string) => Ledger | undefined,
    private readonly onText: (body: string) => void,
  ) {}

  /** Records one delivery of text `body`. */
  text(body: string): void {
    this.onText(body);
  }

  /**
   * Records one delivery whose body is the UTF-8 of `buf[start, end)` (only
   * read during the call), at `now` (performance.now()): for a body made by
   * {@link encodeBody} what {@link Ledger.receive} records for its text; a
   * number field of anything but decimal digits (and one point in the send
   * time) makes it foreign.
   */
  bytes(buf: Uint8Array, start: number, end: number, now = performance.now()): void {
    // `<stream>|<n>|<sent at>|…`: the stream is everything before the first bar.
    let i = start;
    while (i < end && buf[i] !== BAR) i++;
    const a = i;
    if (a >= end) return this.foreign(buf, start, a);
    // n: decimal digits only (what encodeBody writes), at most 2^31 - 1.
    let n = 0;
    for (i = a + 1; i < end && buf[i] !== BAR; i++) {
      const d = buf[i]! - DIGIT_0;
      if (d < 0 || d > 9 || n > 0x7fff_ffff) return this.foreign(buf, start, a);
      n = n * 10 + d;
    }
    if (i >= end || i === a + 1 || n > 0x7fff_ffff) return this.foreign(buf, start, a);
    // The send time: digits, optionally a point and more digits (toFixed(3) of performance.now()).
    let whole = 0;
    let frac = 0;
    let scale = 1;
    let point = false;
    let digits = 0;
    const b = i;
    for (i = b + 1; i < end && buf[i] !== BAR; i++) {
      const c = buf[i]!;
      if (c === DOT && !point) point = true;
      else if (c >= DIGIT_0 && c <= DIGIT_0 + 9) {
        digits++;
        if (point) {
          frac = frac * 10 + (c - DIGIT_0);
          scale *= 10;
        } else whole = whole * 10 + (c - DIGIT_0);
      } else return this.foreign(buf, start, a);
    }
    if (i >= end || digits === 0) return this.foreign(buf, start, a);
    const track = this.trackAt(buf, start, a);
    if (!track) return this.foreign(buf, start, a);
    this.lastLedger!.record(track, n, now - (whole + frac / scale));
  }

  /** Counts a foreign body whose stream field is `buf[start, end)` in the ledger that stream names (or would). */
  private foreign(buf: Uint8Array, start: number, end: number): void {
    this.ledgerOf(utf8.decode(buf.subarray(start, end)))?.countForeign();
  }

  /** The track of the stream named by `buf[start, end)` (the last one's when the bytes are the same); sets lastLedger. */
  private trackAt(buf: Uint8Array, start: number, end: number): Track | undefined {
    const last = this.lastStream;
    let same = this.lastTrack !== undefined && last.length === end - start;
    for (let k = 0; same && k < last.length; k++) same = last[k] === buf[start + k];
    if (same) return this.lastTrack;
    const copy = new Uint8Array(end - start);
    copy.set(buf.subarray(start, end));
    const stream = utf8.decode(copy);
    const ledger = this.ledgerOf(stream);
    const track = ledger?.trackOf(this.uid, stream);
    // Only a stream expected here is remembered: a foreign one is looked up again (the ledger it falls into may change).
    this.lastStream = track ? copy : new Uint8Array(0);
    this.lastLedger = ledger;
    this.lastTrack = track;
    return track;
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
    this.ledgerOf(body)?.receive(recipient, body);
  }

  /** The ledger of the phase `text` (a body or a stream id) names, else the newest one. */
  ledgerOf(text: string): Ledger | undefined {
    const a = text.indexOf(':');
    const b = text.indexOf(':', a + 1);
    const phase = a >= 0 && b > a ? text.slice(a + 1, b) : '';
    return this.byPhase.get(phase) ?? [...this.byPhase.values()].at(-1);
  }

  /** The deliveries of `uid`, as text or bytes, each recorded in its phase's ledger; create it once per connection. */
  recipient(uid: string): RecipientLedger {
    return new RecipientLedger(
      uid,
      (stream) => this.ledgerOf(stream),
      (body) => this.receive(uid, body),
    );
  }
}
