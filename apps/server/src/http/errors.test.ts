import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors.ts';
import { installErrorHandler } from './errors.ts';

/** An app whose routes throw what each test needs, in either envelope; `logged` collects what it logs. */
async function appThrowing(err: unknown) {
  const logged: string[] = [];
  const app = Fastify({ logger: { level: 'error', stream: { write: (line: string) => logged.push(line) } } });
  installErrorHandler(app);
  app.get('/legacy', { config: { errorShape: 'legacy' } }, async () => {
    throw err;
  });
  app.get('/error', { config: { errorShape: 'error' } }, async () => {
    throw err;
  });
  await app.ready();
  const get = async (url: string) => {
    const r = await app.inject({ method: 'GET', url });
    return { status: r.statusCode, body: r.json() as unknown, retryAfter: r.headers['retry-after'] };
  };
  return { get, logged, close: () => app.close() };
}

describe('the central error handler', () => {
  it('answers a DomainError with its status, code and text in the route envelope', async () => {
    const t = await appThrowing(new DomainError('channel_not_found', 400, 'channel not found'));
    expect(await t.get('/legacy')).toMatchObject({
      status: 400,
      body: { msg: 'channel not found', status: 400, code: 'channel_not_found' },
    });
    expect(await t.get('/error')).toMatchObject({ status: 400, body: { error: 'channel not found', code: 'channel_not_found' } });
    expect(t.logged).toEqual([]);
    await t.close();
  });

  it('answers a store failure 503 with its kind only, and asks to retry', async () => {
    const full = Object.assign(new Error('database or disk is full: /var/lib/parley/parley.db'), { code: 'SQLITE_FULL' });
    const t = await appThrowing(full);
    expect(await t.get('/error')).toEqual({
      status: 503,
      body: { error: 'store writes failing (disk_full)', code: 'store_unavailable' },
      retryAfter: '1',
    });
    await t.close();
  });

  it('never echoes an unexpected error: a bare 500, the details only in the log', async () => {
    const t = await appThrowing(new Error('cannot read secret_column of undefined'));
    for (const [url, body] of [
      ['/legacy', { msg: 'internal error', status: 500, code: 'internal_error' }],
      ['/error', { error: 'internal error', code: 'internal_error' }],
    ] as const) {
      const r = await t.get(url);
      expect(r).toMatchObject({ status: 500, body });
      expect(JSON.stringify(r.body)).not.toContain('secret_column');
    }
    expect(t.logged.join('')).toContain('secret_column');
    await t.close();
  });
});
