import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { copyDatadir, expected, hasFixture, parleyctl, tempRoot, writePlan } from './helpers.ts';
import { checkConversations, startOn } from './served.ts';

const NAME = 'holdout-closed';

describe.runIf(hasFixture(NAME))('holdout-closed through the CLI, served by the real server', () => {
  const root = tempRoot();
  const source = copyDatadir(NAME, root);
  const plan = writePlan(root, source);
  const target = join(root, 'target');
  const reports: Record<string, any> = {};

  it('migrates with the default plan; every stage prints progress on stderr', async () => {
    const stages: Array<[string, string[]]> = [
      ['prepare', ['--workspace', join(root, 'ws-prepare')]],
      ['export', ['--workspace', join(root, 'ws-prepare'), '--archive', join(root, 'archive')]],
      ['import', ['--workspace', join(root, 'ws-import'), '--archive', join(root, 'archive')]],
      ['verify', ['--workspace', join(root, 'ws-verify'), '--archive', join(root, 'archive')]],
    ];
    for (const [stage, args] of stages) {
      const r = await parleyctl(['migrate', stage, '--plan', plan, ...args]);
      expect(r.code, `${stage}: ${r.stdout.slice(0, 2000)}`).toBe(0);
      expect(r.stderr, stage).toMatch(new RegExp(`^parleyctl: ${stage}: .+\\d+/s`, 'm'));
      reports[stage] = r.report;
    }
    expect(reports.verify.status).toBe('offline_verified');
    // u99320 deleted its conversation with grp-ember-16 in v2: the membership stays hidden until a new message
    expect(reports.import.hidden_memberships).toBe(1);
    expect(reports.prepare.warnings.filter((w: any) => w.code === 'missing_conversation').map((w: any) => [w.uid, w.channel_id])).toEqual([
      ['u99320', 'grp-ember-16'],
    ]);
  }, 120_000);

  it('answers /conversation/sync with 200 for every user, listing what v2 lists; commands are bindings', async () => {
    const exp = expected(NAME);
    const { server, api } = await startOn(target, 7, 'parley-test');
    try {
      expect(await checkConversations(server, api, exp)).toBeGreaterThan(3000);
      const gone = await fetch(`${api}/conversation/list`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ uid: 'u99320', limit: 200 }),
      });
      const page = (await gone.json()) as any;
      expect(page.conversations.map((c: any) => c.channel_id)).not.toContain('grp-ember-16');
    } finally {
      await server.close();
    }
  }, 120_000);
});
