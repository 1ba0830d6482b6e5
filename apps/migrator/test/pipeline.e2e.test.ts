import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { post } from '../../../test-support/http.ts';
import { expected, fixtureDir, hasFixture, parleyctl, tempRoot, treeHash, writePlan } from './helpers.ts';
import { checkConversations, checkMessages, checkTokens, startOn } from './served.ts';

const FIXTURES = ['basic-closed', 'basic-crash', 'basic-flushed'];

describe.each(FIXTURES)('parleyctl migrate, end to end: %s', (name) => {
  const present = hasFixture(name);
  const root = tempRoot();
  const source = join(fixtureDir(name), 'datadir');
  const plan = writePlan(root, source);
  const target = join(root, 'target');
  const outputs: string[] = [];
  const before = present ? treeHash(source) : '';

  it.runIf(present)(
    'runs prepare, export, import and verify from the CLI',
    async () => {
      const prep = await parleyctl(['migrate', 'prepare', '--plan', plan, '--workspace', join(root, 'ws-prepare')]);
      outputs.push(prep.stdout, prep.stderr);
      expect(prep.code, prep.stdout).toBe(0);
      expect(prep.report.status).toBe('prepared');
      expect(prep.report.blockers).toEqual([]);
      expect(prep.report.selection_digest).toMatch(/^[0-9a-f]{64}$/);
      expect(prep.stderr).toMatch(/messages so far \(\d+\/s\)/);
      const exp = await parleyctl([
        'migrate',
        'export',
        '--plan',
        plan,
        '--workspace',
        join(root, 'ws-prepare'),
        '--archive',
        join(root, 'archive'),
      ]);
      outputs.push(exp.stdout, exp.stderr);
      expect(exp.code, exp.stdout).toBe(0);
      expect(exp.report.complete).toBe(true);
      const imp = await parleyctl([
        'migrate',
        'import',
        '--plan',
        plan,
        '--workspace',
        join(root, 'ws-import'),
        '--archive',
        join(root, 'archive'),
      ]);
      outputs.push(imp.stdout, imp.stderr);
      expect(imp.code, imp.stdout).toBe(0);
      expect(imp.report.status).toBe('imported');
      const ver = await parleyctl([
        'migrate',
        'verify',
        '--plan',
        plan,
        '--workspace',
        join(root, 'ws-verify'),
        '--archive',
        join(root, 'archive'),
      ]);
      outputs.push(ver.stdout, ver.stderr);
      expect(ver.code, ver.stdout).toBe(0);
      expect(ver.report.status).toBe('offline_verified');
      expect(ver.report.cutover_ready).toBe(false);
      expect(ver.report.selection_digest).toBe(prep.report.selection_digest);
      const total = expected(name).message_channels.reduce((n: number, c: any) => n + c.messages.length, 0);
      expect(ver.report.verified_message_replicas).toBe(total * 1);
    },
    60_000,
  );

  it.runIf(present)('leaves the source byte-identical and prints no token', () => {
    expect(treeHash(source)).toBe(before);
    const text = outputs.join('\n');
    for (const u of expected(name).users) for (const d of u.devices) if (d.token !== '') expect(text).not.toContain(d.token);
  });

  it.runIf(present)(
    'serves the imported data from the real server',
    async () => {
      const exp = expected(name);
      const { server, api, ws } = await startOn(target, 7, 'parley-test');
      try {
        await checkTokens(ws, exp);
        await checkMessages(server, api, exp);
        expect(await checkConversations(server, api, exp)).toBeGreaterThan(100);
        const group = exp.message_channels.find((c: any) => c.channel_id === 'group01');
        const sender = exp.channels.find((c: any) => c.channel_id === 'group01').subscribers[0].uid;
        const sent = await post(api, '/message/send', {
          from_uid: sender,
          channel_id: 'group01',
          channel_type: 2,
          payload: Buffer.from('{"type":1,"content":"after migration"}').toString('base64'),
        });
        expect(sent.status, sent.text).toBe(200);
        expect(sent.json.message_seq).toBeGreaterThan(Number(group.last_msg_seq));
      } finally {
        await server.close();
      }
    },
    60_000,
  );
});
