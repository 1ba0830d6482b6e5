import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createTestSchema, postgresReachable } from '@parley/store/testing';
import { fixtureDir, hasFixture, tempRoot } from './helpers.ts';
import { exportArchive, importArchive, prepare, verify } from './stage-helpers.ts';

const EXAMPLES = join(dirname(fileURLToPath(import.meta.url)), '..', 'examples');

/** Each example plan with the fixture data it was written for (sources in plan order). */
const CASES: Array<[string, string[]]> = [
  ['one-node.json', ['basic-closed/datadir']],
  ['edge-policies.json', ['edge-closed/datadir']],
  ['three-nodes.json', ['cluster3-closed/datadir/node1', 'cluster3-closed/datadir/node2', 'cluster3-closed/datadir/node3']],
  ['three-node-cluster.json', ['cluster3-closed/datadir/node1', 'cluster3-closed/datadir/node2', 'cluster3-closed/datadir/node3']],
];
/** Plans whose target is a PostgreSQL store run only where the test server answers. */
const pgUp = await postgresReachable();

describe.each(CASES)('example plan %s', (file, data) => {
  it.runIf(hasFixture(data[0]!.split('/')[0]!) && (pgUp || !file.includes('cluster')))(
    'runs all four stages on the fixture it describes, its paths pointed at copies',
    async () => {
      const root = tempRoot();
      const plan = JSON.parse(readFileSync(join(EXAMPLES, file), 'utf8'));
      plan.sources.forEach((s: any, i: number) => {
        s.data_dir = join(root, `source-${i}`);
        cpSync(join(fixtureDir(''), data[i]!), s.data_dir, { recursive: true });
      });
      plan.target.nodes.forEach((n: any, i: number) => (n.data_dir = join(root, `target-${i}`)));
      const schema = plan.target.store ? createTestSchema('parley_example') : undefined;
      if (schema) plan.target.store.postgres_url = schema.url;
      onTestFinished(() => schema?.drop());
      const planFile = join(root, 'plan.json');
      writeFileSync(planFile, JSON.stringify(plan, null, 2));
      const p = await prepare(planFile, join(root, 'ws'));
      expect(p.code, JSON.stringify(p.report.errors.concat(p.report.blockers as never[])).slice(0, 2000)).toBe(0);
      expect((await exportArchive(planFile, join(root, 'ws'), join(root, 'archive'))).code).toBe(0);
      expect((await importArchive(planFile, join(root, 'ws-import'), join(root, 'archive'))).code).toBe(0);
      const v = await verify(planFile, join(root, 'ws-verify'), join(root, 'archive'));
      expect(v.report.status, JSON.stringify(v.report.errors)).toBe('offline_verified');
      if (file === 'edge-policies.json')
        expect(p.report.excluded).toEqual({
          keep_latest_duplicates: 1,
          'quarantine:message_id_clash': 1,
          'quarantine:unresolved_allowlist_channel': 2,
        });
      if (file.startsWith('three-node')) expect(p.report.retained_messages).toBe(362);
      if (file === 'three-node-cluster.json') expect(v.report.targets.map((t: any) => t.node_id)).toEqual([1, 2, 3]);
    },
    60_000,
  );
});
