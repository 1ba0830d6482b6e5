import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import swagger from '@fastify/swagger';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { Int64 } from '@parley/shared';

/** Where the generated OpenAPI document is served. */
export const OPENAPI_PATH = '/docs/openapi.json';

const here = dirname(fileURLToPath(import.meta.url));
const INT64_DESCRIPTION = (Int64 as { description?: string }).description;

/**
 * Marks every schema built from the shared `Int64` TypeBox type (an integer
 * carried exactly, never through a JS number) with `format: int64`, in place.
 * The shared type cannot carry the format itself: Ajv would reject the unknown
 * format when the routes compile.
 */
function markInt64(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) markInt64(item);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const schema = node as Record<string, unknown>;
  if (schema.type === 'integer' && schema.description === INT64_DESCRIPTION && schema.format === undefined) schema.format = 'int64';
  for (const value of Object.values(schema)) markInt64(value);
}

/**
 * Registers `@fastify/swagger`, which records every route added after it, so
 * it must be installed before the routes. The document is generated from the
 * same TypeBox schemas the routes validate and serialize with.
 */
export async function installOpenApi(app: FastifyInstance): Promise<void> {
  const pkg = JSON.parse(readFileSync(join(here, '..', '..', 'package.json'), 'utf8')) as { version: string };
  await app.register(swagger, {
    openapi: {
      openapi: '3.2.0',
      info: {
        title: 'Parley HTTP API',
        version: pkg.version,
        description: 'The WuKongIM v3 HTTP API as Parley serves it. 64-bit message ids are exact JSON integers (`format: int64`).',
      },
    },
    transformObject: (documents) => {
      const document = 'openapiObject' in documents ? documents.openapiObject : documents.swaggerObject;
      markInt64(document);
      return document;
    },
  });
}

/** `GET /docs/openapi.json`: the OpenAPI 3.2 document of every route but itself. */
export const docsRoutes: FastifyPluginAsync = async (app) => {
  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => app.swagger());
};
