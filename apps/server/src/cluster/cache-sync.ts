import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { Logger } from 'pino';
import type { SystemUidService } from '../identity/system-uid.service.ts';
import type { TokenService } from '../identity/token.service.ts';
import type { ChannelCache } from '../messaging/channel-cache.ts';
import type { Bus } from './bus.ts';

const Node = Type.Integer({ minimum: 1, maximum: 1023 });
const Invalidation = Type.Union([
  Type.Object({ node: Node, kind: Type.Literal('channel'), id: Type.String({ maxLength: 4096 }), type: Type.Integer() }),
  Type.Object({ node: Node, kind: Type.Literal('system_uids') }),
]);
const Kick = Type.Object({
  node: Node,
  uid: Type.String({ maxLength: 1024 }),
  flags: Type.Array(Type.Integer({ minimum: 0, maximum: 255 }), { maxItems: 8 }),
});

/**
 * Keeps every node's in-memory state in step with writes made on another:
 * a channel's info, subscribers and lists (the channel cache), the persisted
 * system uids, and revoked tokens (`device_quit` on one node closes the
 * matching sessions on every node). Each node publishes what it changed and
 * applies what the others publish.
 */
export function startCacheSync(
  bus: Bus,
  nodeId: number,
  deps: { cache: ChannelCache; systemUids: SystemUidService; tokens: TokenService },
  log: Logger,
): void {
  const { cache, systemUids, tokens } = deps;
  cache.onInvalidate = (id, type) => bus.publish(bus.subject('inval'), { node: nodeId, kind: 'channel', id, type });
  systemUids.onPersistedChange = () => bus.publish(bus.subject('inval'), { node: nodeId, kind: 'system_uids' });
  tokens.onQuit = (uid, flags) => bus.publish(bus.subject('kick'), { node: nodeId, uid, flags });

  bus.subscribe(bus.subject('inval'), async (body) => {
    if (!Value.Check(Invalidation, body)) return log.warn('cluster invalidation with an unexpected shape; ignored');
    if (body.node === nodeId) return;
    if (body.kind === 'channel') cache.drop(body.id, body.type);
    else await systemUids.reload();
  });
  bus.subscribe(bus.subject('kick'), (body) => {
    if (!Value.Check(Kick, body)) return log.warn('cluster kick with an unexpected shape; ignored');
    if (body.node !== nodeId) tokens.kickLocal(body.uid, body.flags);
  });
}
