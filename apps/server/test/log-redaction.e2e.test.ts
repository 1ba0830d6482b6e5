import { describe, expect, it } from 'vitest';
import { JsonRpcClient } from '@parley/protocol/jsonrpc';
import { connectRpc, post, spawnServer, storeToken, tempDir, testEnv } from './helpers.ts';

describe('logs', () => {
  it('never contain a token, even at trace level and on failures', async () => {
    const srv = await spawnServer(testEnv(tempDir(), { PARLEY_LOG_LEVEL: 'trace' }));
    const good = 'tok-GOOD-4f1c9a7e';
    const bad = 'tok-BAD-8d2e6b31';
    try {
      await storeToken(srv.api, 'logu', good);
      await post(srv.api, '/user/token', { uid: 'logu@x', token: good });
      await post(srv.api, '/user/token', `{"uid":"logu","token":"${good}"`, true);
      const ok = await connectRpc(srv.ws, 'logu', good);
      await ok.request('send', { channelId: 'peer', channelType: 1, payload: { t: good } });
      const refused = await JsonRpcClient.open(srv.ws);
      await refused.request('connect', { uid: 'logu', token: bad, deviceFlag: 1 });
      await refused.closed;
      const malformed = await JsonRpcClient.open(srv.ws);
      malformed.sendRaw(`{"method":"connect","id":"1","params":{"uid":"logu","token":"${bad}","deviceFlag":"x"}}`);
      await malformed.closed;
      ok.close();
    } finally {
      srv.proc.kill('SIGTERM');
      await srv.exited;
    }
    const log = srv.stderr();
    expect(log).toContain('connect refused');
    expect(log).not.toContain(good);
    expect(log).not.toContain(bad);
  }, 30_000);
});
