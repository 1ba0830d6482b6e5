import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { OPENAPI_PATH } from '../src/http/docs.route.ts';
import { startTestServer, type TestServer } from './helpers.ts';

/** Every route any Fastify instance in this file registers, seen by an `onRoute` hook added at creation. */
const registered = vi.hoisted(() => [] as { method: string; url: string }[]);

vi.mock('fastify', async (importOriginal) => {
  const real = await importOriginal<typeof import('fastify')>();
  const create = ((options?: Parameters<typeof real.default>[0]) => {
    const app = real.default(options);
    app.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) registered.push({ method, url: route.url });
    });
    return app;
  }) as typeof real.default;
  return { ...real, default: create };
});

/** Methods whose operations are not checked: Fastify adds HEAD to every GET, and CORS answers OPTIONS. */
const UNCHECKED = new Set(['HEAD', 'OPTIONS']);

/** A Fastify URL as an OpenAPI path: `:name` → `{name}`, `*` → `{*}`. */
function openapiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)(\([^)]*\))?/g, '{$1}').replace(/\*/g, '{*}');
}

type Operations = Record<string, unknown> & { additionalOperations?: Record<string, unknown> };

function hasOperation(doc: { paths: Record<string, Operations> }, method: string, path: string): boolean {
  const item = doc.paths[path];
  return item !== undefined && (item[method.toLowerCase()] !== undefined || item.additionalOperations?.[method] !== undefined);
}

describe('GET /docs/openapi.json', () => {
  let t: TestServer;
  let doc: any;

  beforeAll(async () => {
    // Optional route groups on, so the document is checked against all of them.
    t = await startTestServer({ PARLEY_OBSERVABILITY_DEBUG_API_ENABLE: 'true', PARLEY_BENCH_API_ENABLE: 'true' });
    const res = await fetch(t.api + OPENAPI_PATH);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    doc = await res.json();
  });

  afterAll(async () => {
    await t?.close();
  });

  it('is a valid OpenAPI document', async () => {
    const result = await new Validator().validate(doc);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(doc.openapi).toMatch(/^3\./);
  });

  it('lists every registered operation but its own, and nothing else', () => {
    const checked = registered.filter((r) => !UNCHECKED.has(r.method) && r.url !== OPENAPI_PATH);
    expect(checked).toContainEqual({ method: 'POST', url: '/message/send' });
    const missing = checked.filter((r) => !hasOperation(doc, r.method, openapiPath(r.url)));
    expect(missing).toEqual([]);

    const known = new Set(registered.map((r) => `${r.method} ${openapiPath(r.url)}`));
    const extra: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, Operations>)) {
      for (const method of Object.keys(item)) {
        if (method === 'additionalOperations') continue;
        if (!known.has(`${method.toUpperCase()} ${path}`)) extra.push(`${method} ${path}`);
      }
    }
    expect(extra).toEqual([]);
    expect(doc.paths[OPENAPI_PATH]).toBeUndefined();
  });

  it('renders the shared Int64 type as an exact 64-bit integer', () => {
    const result = doc.paths['/message/send'].post.responses['200'].content['application/json'].schema;
    expect(result.properties.message_id).toMatchObject({ type: 'integer', format: 'int64' });
    expect(doc.paths['/message/send'].post.requestBody.content['application/json'].schema.required).toEqual(['payload']);
  });
});
