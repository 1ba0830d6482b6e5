/**
 * Parses a JSON request body, turning every integer literal beyond 2^53
 * into a string of its exact digits instead of a rounded JS number. Fields
 * that accept 64-bit ids (`message_ids`, `message_id`) take those strings;
 * anywhere else the type check rejects them.
 */
export function parseJsonBody(text: string): unknown {
  if (!/\d{16}/.test(text)) return JSON.parse(text);
  return JSON.parse(quoteUnsafeIntegers(text));
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
        out += `${text.slice(from, start)}"${token}"`;
        from = i;
      }
      continue;
    }
    i++;
  }
  return out + text.slice(from);
}
