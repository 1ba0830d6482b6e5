import { useQuery } from '@tanstack/react-query';
import type { TSchema, Static } from '@sinclair/typebox';
import { openSchema, type ConsoleNode } from '@parley/shared';
import { readReply } from '../../api/ops.ts';
import { usePlatform } from '../../platform/context.tsx';

const opened = new WeakMap<TSchema, TSchema>();
function open<S extends TSchema>(s: S): S {
  let o = opened.get(s);
  if (!o) opened.set(s, (o = openSchema(s)));
  return o as S;
}

/** A `/debug/*` request, on demand (no polling: these are investigations, not dashboards). */
export function useDebug<S extends TSchema>(node: ConsoleNode | undefined, path: string, schema: S, query?: Record<string, string>) {
  const { host } = usePlatform();
  return useQuery({
    queryKey: ['debug', node?.id, path, query],
    enabled: node !== undefined && query !== undefined,
    queryFn: async (): Promise<Static<S>> =>
      readReply('debug', await host.ops.get({ node: node!.id, path, query: query ?? {} }), open(schema)),
    retry: false,
    staleTime: Infinity,
  });
}
