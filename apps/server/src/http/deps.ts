import type { Api } from '../api/index.ts';
import type { Readiness } from '../observe/readiness.ts';

export type { Readiness };

/** Everything the business routes call into: the API's operations and the readiness check. */
export interface HttpDeps {
  api: Api;
  readiness(): Promise<Readiness>;
}
