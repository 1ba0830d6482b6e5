import { JsonRpcClient } from '@parley/protocol/jsonrpc';

/** Opens a JSON-RPC session and connects it; throws unless the connect succeeds. */
export async function connectRpc(ws: string, uid: string, token: string, deviceFlag = 1, deviceId = `${uid}-dev`): Promise<JsonRpcClient> {
  const client = await JsonRpcClient.open(ws);
  const r = await client.request('connect', { uid, token, deviceFlag, deviceId, clientTimestamp: Date.now() });
  const result = r.result as { reasonCode?: number } | undefined;
  if (result?.reasonCode !== 1) throw new Error(`connect failed: ${JSON.stringify(r)}`);
  return client;
}
