import type { TopAlert, TopAlerts } from '@parley/shared';
import { Ring } from './ring.ts';

/** A condition that holds on one collector tick. */
export interface AlertCondition {
  severity: string;
  component: string;
  kind: string;
  message: string;
  hint?: string;
  evidence?: Record<string, string>;
}

/** Resolved alerts kept for `recent`. */
const RECENT_CAPACITY = 200;

export const fingerprintOf = (c: AlertCondition): string => `${c.component}|${c.kind}|${c.message}`;

/**
 * Sticky alerts. Each tick passes the conditions that hold now: a new
 * fingerprint opens an alert, a known one bumps `count` and `last_seen`, and
 * an active alert whose condition is gone is resolved (`resolved_at` set) and
 * moves to `recent`, where it stays until pushed out.
 */
export class AlertBook {
  private readonly active = new Map<string, TopAlert>();
  private readonly recent = new Ring<TopAlert>(RECENT_CAPACITY);
  private seq = 0;

  constructor(
    private readonly nodeId: number,
    private readonly nodeName: string,
  ) {}

  observe(conditions: readonly AlertCondition[], now: Date): void {
    const at = now.toISOString();
    const seen = new Set<string>();
    for (const c of conditions) {
      const fp = fingerprintOf(c);
      if (seen.has(fp)) continue;
      seen.add(fp);
      const open = this.active.get(fp);
      if (open) {
        open.count++;
        open.last_seen = at;
        open.severity = c.severity;
        if (c.evidence) open.evidence = c.evidence;
        continue;
      }
      this.seq++;
      const alert: TopAlert = {
        id: `${this.nodeId}-${this.seq}`,
        fingerprint: fp,
        node_id: this.nodeId,
        node_name: this.nodeName,
        severity: c.severity,
        component: c.component,
        kind: c.kind,
        message: c.message,
        first_seen: at,
        last_seen: at,
        count: 1,
        active: true,
      };
      if (c.hint) alert.hint = c.hint;
      if (c.evidence) alert.evidence = c.evidence;
      this.active.set(fp, alert);
    }
    for (const [fp, alert] of this.active) {
      if (seen.has(fp)) continue;
      this.active.delete(fp);
      this.recent.push({ ...alert, active: false, resolved_at: at });
    }
  }

  /** The `alerts` section, lists newest first and capped by `limit`. */
  section(limit: number): TopAlerts {
    const active = [...this.active.values()].reverse();
    const recent = this.recent.toArray().reverse();
    const bySeverity = (s: string) => active.filter((a) => a.severity === s).length;
    return {
      counts: {
        active: active.length,
        recent: recent.length,
        warning: bySeverity('warn'),
        error: bySeverity('error'),
        critical: bySeverity('critical'),
      },
      active: active.slice(0, limit).map((a) => ({ ...a })),
      recent: recent.slice(0, limit),
    };
  }
}
