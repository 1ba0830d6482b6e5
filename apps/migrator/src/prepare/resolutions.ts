import type { Plan } from '@parley/shared';
import type { Finding, PatchOp, Resolution } from './findings.ts';
import { PatchBuilder } from './patch.ts';

type Make = (f: Finding, b: PatchBuilder) => Resolution;

/** What resolves each finding code, given its evidence. */
const MAKERS: Record<string, Make> = {
  missing_conversation: (f, b) => ({
    patch: b.append(['metadata', 'missing_conversations'], {
      capture_digest: f.evidence!.capture_digest,
      uid_sha256: f.evidence!.uid_sha256,
      channel_sha256: f.evidence!.channel_sha256,
      retained_tail: f.evidence!.retained_tail,
    }),
    sentence: 'Keeps this membership visible with its whole history pullable, unlike v2 (which shows no conversation); add "visibility": "hidden_until_new_message" to keep the default instead.',
  }),
};

/** For codes without a plan member that resolves them. */
const NONE: Resolution = { patch: [], sentence: 'No plan member resolves this: the source must be checked (and repaired or re-collected) or a newer release used.' };

/**
 * Gives every blocker (and every warning a plan member can change) its
 * resolution, cumulatively: blockers first, then warnings. Returns the
 * blockers' patches concatenated.
 */
export function attachResolutions(plan: Plan, blockers: Finding[], warnings: Finding[]): PatchOp[] {
  const b = new PatchBuilder(plan);
  const all: PatchOp[] = [];
  for (const f of blockers) {
    const make = MAKERS[f.code];
    f.resolution ??= make ? make(f, b) : NONE;
    all.push(...f.resolution.patch);
  }
  for (const f of warnings) {
    const make = MAKERS[f.code];
    if (make && f.evidence && f.evidence.hidden !== false) f.resolution ??= make(f, b);
  }
  return all;
}
