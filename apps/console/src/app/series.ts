import { useSyncExternalStore } from 'react';
import { ringCapacity, SeriesStore } from '../lib/series-store.ts';
import { DEFAULT_CONTROLS } from './controls.ts';

/** The chart history of this page: one store, cleared when the context or window changes. */
export const seriesStore = new SeriesStore(ringCapacity(DEFAULT_CONTROLS.rangeSec, DEFAULT_CONTROLS.refreshMs));

/** Re-renders the caller whenever a point is added. */
export function useSeriesVersion(): number {
  return useSyncExternalStore(seriesStore.subscribe, seriesStore.getVersion);
}
