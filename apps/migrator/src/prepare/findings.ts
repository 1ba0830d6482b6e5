/** A blocker or warning with where it was found. */
export interface Finding {
  code: string;
  detail: string;
  node_id?: number;
  shard?: number;
  channel_id?: string;
  channel_type?: number;
  message_seq?: number;
  uid?: string;
  /** Base64 of the original key, for raw-key findings. */
  key?: string;
  /** What binds a plan entry to this finding (digests, counts), where one can. */
  evidence?: Record<string, unknown>;
  /** The plan change that resolves a blocker (or changes a warning's outcome), and what it means. */
  resolution?: Resolution;
}

/** One RFC 6902 operation on the plan file. */
export interface PatchOp {
  op: 'add' | 'replace' | 'remove' | 'test';
  path: string;
  value?: unknown;
}

/**
 * A JSON Patch (RFC 6902) against the plan and one sentence for the
 * operator. Patches are cumulative: each one applies to the plan with the
 * patches of the findings listed before it (blockers first, then warnings)
 * already applied. An empty patch means no plan member resolves it.
 */
export interface Resolution {
  patch: PatchOp[];
  sentence: string;
}

/** Blockers stop the run (nothing is exported); warnings are reported and carried. */
export class Findings {
  readonly blockers: Finding[] = [];
  readonly warnings: Finding[] = [];
  /** Warnings per code beyond this many are counted, not listed. */
  private readonly warningCounts = new Map<string, number>();

  block(f: Finding): void {
    this.blockers.push(f);
  }

  warn(f: Finding, limit = 20): void {
    const n = (this.warningCounts.get(f.code) ?? 0) + 1;
    this.warningCounts.set(f.code, n);
    if (n <= limit) this.warnings.push(f);
  }

  /** Warning totals per code (including the unlisted ones). */
  warningTotals(): Record<string, number> {
    return Object.fromEntries(this.warningCounts);
  }
}
