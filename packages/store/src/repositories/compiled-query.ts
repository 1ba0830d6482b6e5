import type { Compilable, CompiledQuery } from 'kysely';

/**
 * A query built and compiled once, then run with fresh parameters: for the
 * look-ups every CONNECT makes, where building and compiling the query each
 * time cost more than the index seek itself. `build` receives `marks`
 * (distinct sentinel values, one per parameter) and must use each exactly
 * once; the compiled parameters are checked to be the marks in that order, so
 * the returned function's arguments land where they belong in any dialect.
 */
export function compiledOnce<R, P extends readonly unknown[]>(
  build: (...marks: P) => Compilable<R>,
  marks: P,
): (...params: P) => CompiledQuery<R> {
  let compiled: CompiledQuery<R> | undefined;
  return (...params) => {
    if (!compiled) {
      const q = build(...marks).compile();
      if (q.parameters.length !== marks.length || q.parameters.some((p, i) => p !== marks[i])) {
        throw new Error(`compiledOnce: the query's parameters are not its marks in order (${q.sql})`);
      }
      compiled = q;
    }
    return { ...compiled, parameters: params };
  };
}
