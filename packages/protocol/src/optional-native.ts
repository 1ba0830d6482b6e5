import process from 'node:process';
import { createRequire } from 'node:module';

/**
 * An optional native addon (a package whose `native` export is undefined, with
 * a `loadError`, when it was not built), chosen by an environment variable:
 * unset takes it when built, `values.off` does without it, `values.on`
 * requires it (an error here when it is not built); any other value is an
 * error. `why` says what was chosen and why, for logs and tests.
 */
export function loadOptionalNative<T>(
  variable: string,
  values: { on: string; off: string },
  pkg: string,
): { native: T | undefined; why: string } {
  const wanted = process.env[variable] ?? '';
  if (wanted !== '' && wanted !== values.on && wanted !== values.off) {
    throw new Error(`${variable} must be '${values.on}' or '${values.off}', not '${wanted}'`);
  }
  if (wanted === values.off) return { native: undefined, why: `${variable}=${values.off}` };
  let loaded: { native?: T; loadError?: unknown };
  try {
    loaded = createRequire(import.meta.url)(pkg) as typeof loaded;
  } catch (err) {
    loaded = { loadError: err };
  }
  if (loaded.native) return { native: loaded.native, why: 'built' };
  const why = `${pkg} is not built (${(loaded.loadError as Error | undefined)?.message ?? 'no module'})`;
  if (wanted === values.on) throw new Error(`${variable}=${values.on}, but ${why}`);
  return { native: undefined, why };
}
