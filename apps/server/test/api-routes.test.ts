import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTE_RULES } from '../src/http/route-scopes.ts';
import { startTestApp, type TestApp } from './app.ts';

const here = dirname(fileURLToPath(import.meta.url));
/** Route prefixes that are operations routes, not business operations. */
const OPS = /^\/(healthz|readyz|metrics|top|debug|bench|docs)(\/|$)/;

interface Row {
  n: number;
  method: string;
  path: string;
  scope: string;
  test: string;
}

function readTable(): Row[] {
  const readme = readFileSync(join(here, '..', 'README.md'), 'utf8');
  return [...readme.matchAll(/^\| (\d+) \| (GET|POST) \| `([^`]+)` \| `(\w+)` \| `test\/([^`]+)` \|$/gm)].map((m) => ({
    n: Number(m[1]),
    method: m[2]!,
    path: m[3]!,
    scope: m[4]!,
    test: m[5]!,
  }));
}

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('the README operation table', () => {
  it('lists 48 operations, numbered 1..48, each once', () => {
    const rows = readTable();
    expect(rows.map((r) => r.n)).toEqual(Array.from({ length: 48 }, (_, i) => i + 1));
    expect(new Set(rows.map((r) => `${r.method} ${r.path}`)).size).toBe(48);
  });

  it('matches the registered business routes exactly', () => {
    const registered = t.app.registeredRoutes
      .filter((r) => r.method !== 'OPTIONS' && !OPS.test(r.url))
      .map((r) => `${r.method} ${r.url}`)
      .sort();
    expect(registered).toEqual(
      readTable()
        .map((r) => `${r.method} ${r.path}`)
        .sort(),
    );
  });

  it('names for each row the API key scope the route really requires', () => {
    for (const row of readTable()) expect(ROUTE_RULES[`${row.method} ${row.path}`]?.access, `${row.method} ${row.path}`).toBe(row.scope);
  });

  it('names for each row a test file that exercises its path', () => {
    for (const row of readTable()) {
      const file = join(here, row.test);
      expect(existsSync(file), row.test).toBe(true);
      expect(readFileSync(file, 'utf8'), `${row.path} in ${row.test}`).toContain(`'${row.path}`);
    }
  });
});
