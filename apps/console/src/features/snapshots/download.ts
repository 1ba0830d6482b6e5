import type { NodeView } from '../overview/view-model.ts';
import { buildSaved, savedFileName } from './view-model.ts';

/** Saves the nodes' current snapshots as a JSON file (a browser download; Electron asks where). */
export function downloadSnapshots(views: readonly NodeView[], now: number): void {
  const saved = buildSaved(views, now);
  const url = URL.createObjectURL(new Blob([JSON.stringify(saved, null, 2)], { type: 'application/json' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = savedFileName(saved.saved_at);
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
