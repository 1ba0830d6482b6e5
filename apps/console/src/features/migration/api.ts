import { useQuery, useQueryClient, type UseQueryResult } from '@tanstack/react-query';
import { useCallback, useEffect, useRef, useState, useSyncExternalStore } from 'react';
import { useSearchParams } from 'react-router';
import type { MigrationState, PlanDetail, ReportReply, RunStatus } from '@parley/shared';
import type { HostResult } from '../../../host/contract.ts';
import { unwrap } from '../../api/queries.ts';
import { usePlatform } from '../../platform/context.tsx';

/** The host's answer as a value, or an Error carrying the host's own message (shown as it is). */
export function value<T>(r: HostResult<T>): T {
  if (r.ok) return r.value;
  throw new Error(r.error.error);
}

/** Root, saved plans, preflight and running stages (refreshed every 2 s while a stage runs). */
export function useMigrationState(): UseQueryResult<MigrationState> {
  const { host } = usePlatform();
  return useQuery({
    queryKey: ['migration'],
    queryFn: async () => unwrap(await host.migration.state()),
    refetchInterval: (q) => ((q.state.data?.active_runs.length ?? 0) > 0 ? 2_000 : false),
    retry: false,
  });
}

export function usePlanDetail(planId: string | undefined): UseQueryResult<PlanDetail> {
  const { host } = usePlatform();
  return useQuery({
    queryKey: ['migration', 'plan', planId],
    enabled: planId !== undefined,
    queryFn: async () => unwrap(await host.migration.plan({ plan_id: planId! })),
    retry: false,
  });
}

export function useReport(planId: string | undefined, file: string | undefined): UseQueryResult<ReportReply> {
  const { host } = usePlatform();
  return useQuery({
    queryKey: ['migration', 'report', planId, file],
    enabled: planId !== undefined && file !== undefined,
    queryFn: async () => unwrap(await host.migration.report({ plan_id: planId!, file: file! })),
    staleTime: Infinity,
    retry: false,
  });
}

/** Everything the wizard shows again after a change. */
export function useRefreshMigration(): () => Promise<void> {
  const client = useQueryClient();
  return useCallback(() => client.invalidateQueries({ queryKey: ['migration'] }), [client]);
}

/**
 * A running stage, polled every 400 ms: its record and every stderr line so
 * far (each poll asks only for the lines after the last one it has). Stops
 * polling when the run ends and refreshes the plan's runs.
 */
export function useRunFollow(runId: string | undefined): { status?: RunStatus; lines: string[]; error?: string } {
  const { host } = usePlatform();
  const refresh = useRefreshMigration();
  const [status, setStatus] = useState<RunStatus>();
  const [lines, setLines] = useState<string[]>([]);
  const [error, setError] = useState<string>();
  const next = useRef(0);
  useEffect(() => {
    setStatus(undefined);
    setLines([]);
    setError(undefined);
    next.current = 0;
    if (!runId) return;
    let stop = false;
    const tick = async () => {
      if (stop) return;
      const r = await host.migration.runStatus({ run_id: runId, since: next.current });
      if (stop) return;
      if (!r.ok) {
        setError(r.error.error);
        return;
      }
      next.current = r.value.next;
      setStatus(r.value);
      if (r.value.lines.length > 0) setLines((l) => [...l, ...r.value.lines].slice(-5_000));
      if (r.value.state === 'running') setTimeout(() => void tick(), 400);
      else void refresh();
    };
    void tick();
    return () => {
      stop = true;
    };
  }, [runId, host, refresh]);
  return { status, lines, error };
}

const OPERATOR_KEY = 'parley.migration.operator';
const ROOT_KEY = 'parley.migration.lastRoot';

/** Listeners of localStorage keys this page writes, so every component reading one re-renders. */
const listeners = new Map<string, Set<() => void>>();

/** A value kept in localStorage (this browser only), with a setter shared by every component using the key. */
function useStored(key: string): [string, (v: string) => void] {
  const v = useSyncExternalStore(
    (cb) => {
      const set = listeners.get(key) ?? new Set();
      listeners.set(key, set);
      set.add(cb);
      return () => set.delete(cb);
    },
    () => localStorage.getItem(key) ?? '',
  );
  const set = useCallback(
    (x: string) => {
      localStorage.setItem(key, x);
      for (const cb of listeners.get(key) ?? []) cb();
    },
    [key],
  );
  return [v, set];
}

/** The plan the wizard works on: `?plan=` in the address (so a reload keeps it), else the newest saved plan. */
export function useSelectedPlan(state: MigrationState | undefined): [string | undefined, (id: string) => void] {
  const [params, setParams] = useSearchParams();
  const ids = state?.plans.map((p) => p.id) ?? [];
  const asked = params.get('plan') ?? '';
  const id = ids.includes(asked) ? asked : ids.at(-1);
  const select = useCallback(
    (next: string) =>
      setParams(
        (p) => {
          p.set('plan', next);
          return p;
        },
        { replace: true },
      ),
    [setParams],
  );
  return [id, select];
}

/** Who ticks items in this browser (kept with each tick). */
export const useOperator = () => useStored(OPERATOR_KEY);
export const useLastRoot = () => useStored(ROOT_KEY);
