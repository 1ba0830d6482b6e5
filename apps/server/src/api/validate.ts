/**
 * The checks the business API's operations share, with the texts WuKongIM
 * answers (the contract pins them); each failure is a 400 `DomainError`.
 */
import { invalid } from '../errors.ts';

/** Characters a uid given to `/user/token` may not contain. */
const UID_FORBIDDEN = /[@#&]/;
/** Characters a channel id may not contain. */
const CHANNEL_FORBIDDEN = /[@#]/;

export function requireUid(uid: string | undefined, message = 'uid不能为空！'): string {
  const value = (uid ?? '').trim();
  if (value === '') throw invalid(message);
  return value;
}

export function checkTokenUid(uid: string): void {
  if (UID_FORBIDDEN.test(uid)) throw invalid('uid不能包含特殊字符！');
}

export function requireChannelId(channelId: string, message = '频道ID不能为空！'): string {
  const value = channelId.trim();
  if (value === '') throw invalid(message);
  if (CHANNEL_FORBIDDEN.test(value)) throw invalid('频道ID不能包含特殊字符！');
  return value;
}

/** Subscriber lists: non-empty, with no blank entry. */
export function requireUids(uids: readonly string[] | undefined, message = '订阅者不能为空！'): string[] {
  if (!uids || uids.length === 0) throw invalid(message);
  const out = uids.map((u) => u.trim());
  if (out.some((u) => u === '')) throw invalid(message);
  return out;
}
