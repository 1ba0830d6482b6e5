import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

export { call, waitFor, type HttpResult as OpsResult } from '../../../test-support/http.ts';

/** Every schema error of `value`, as readable lines (empty when valid). */
export function schemaErrors(schema: TSchema, value: unknown): string[] {
  return [...Value.Errors(schema, value)].map((e) => `${e.path}: ${e.message}`);
}
