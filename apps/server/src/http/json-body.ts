import { jsonDepthExceeds } from '@parley/protocol/jsonrpc';

/**
 * Parses a JSON request body with two bounds the plain parser lacks:
 * - nesting deeper than {@link MAX_JSON_DEPTH} is refused before parsing, so
 *   no later recursive step (validation, serialization) can overflow the stack;
 * - integer literals beyond 2^53 are kept exact, but only where a 64-bit id
 *   is accepted (`message_id`, `message_ids`): there they become strings of
 *   their exact digits; anywhere else such a number is refused, so it can
 *   never pass as a string where a string is required.
 * Every refusal throws a `SyntaxError` (a 400 bind error for the routes).
 */
export function parseJsonBody(text: string): unknown {
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) throw new SyntaxError(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  if (!/\d{16}/.test(text)) return JSON.parse(text);
  return unmark(JSON.parse(quoteUnsafeIntegers(text)), undefined);
}

/** Deepest object/array nesting accepted in a request body (or a JSON-RPC frame). */
export const MAX_JSON_DEPTH = 64;

/** Keys whose values (or array elements) may be 64-bit ids. */
const ID_KEYS = new Set(['message_id', 'message_ids']);

/** Prefix of an unsafe integer while it travels as a string through JSON.parse. */
const MARK = '\u0001';

function unmark(value: unknown, key: string | undefined): unknown {
  if (typeof value === 'string') {
    if (!value.startsWith(MARK)) return value;
    if (key !== undefined && ID_KEYS.has(key)) return value.slice(1);
    throw new SyntaxError(`${key ?? 'a value'}: an integer beyond 2^53 where it is not accepted`);
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = unmark(value[i], key);
    return value;
  }
  if (typeof value === 'object' && value !== null) {
    const o = value as Record<string, unknown>;
    for (const k of Object.keys(o)) o[k] = unmark(o[k], k);
  }
  return value;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function quoteUnsafeIntegers(text: string): string {
  let out = '';
  let from = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i++;
      while (i < n && text.charCodeAt(i) !== 0x22) i += text.charCodeAt(i) === 0x5c ? 2 : 1;
      i++;
      continue;
    }
    if (c === 0x2d || isDigit(c)) {
      const start = i;
      i++;
      while (i < n && isDigit(text.charCodeAt(i))) i++;
      let integer = true;
      while (i < n && /[.eE+\-0-9]/.test(text[i]!)) {
        integer = false;
        i++;
      }
      const token = text.slice(start, i);
      if (integer && token.replace('-', '').length >= 16 && !Number.isSafeInteger(Number(token))) {
        out += `${text.slice(from, start)}"\\u0001${token}"`;
        from = i;
      }
      continue;
    }
    i++;
  }
  return out + text.slice(from);
}
