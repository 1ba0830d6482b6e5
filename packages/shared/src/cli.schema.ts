import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/**
 * The line `parley start` prints on stdout once every listener is bound:
 * what a supervisor, the bench or a test waits for to learn the bound
 * addresses (`host:port`; port 0 in the config becomes the real one).
 */
export const ListeningEvent = Type.Object({
  event: Type.Literal('listening'),
  node_id: Type.Integer(),
  api: Type.String(),
  ws: Type.String(),
  tcp: Type.String(),
  data_dir: Type.String(),
});
export type ListeningEvent = Static<typeof ListeningEvent>;

/** The listening event among the lines `parley start` printed so far, once it is there. */
export function listeningEventIn(output: string): ListeningEvent | undefined {
  for (const line of output.split('\n')) {
    if (!line.includes('"event":"listening"')) continue;
    try {
      const value: unknown = JSON.parse(line);
      if (Value.Check(ListeningEvent, value)) return value;
    } catch {
      // not the whole line yet
    }
  }
  return undefined;
}
