import { Buffer } from 'node:buffer';

/** A client frame as RFC 6455 wants it: masked, FIN, opcode (text 1, ping 9), 7- 16- or 64-bit length. */
export function clientFrame(data: string | Buffer, opcode = 1, fin = true, mask = [0x12, 0x34, 0x56, 0x78]): Buffer {
  const body = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  const head = body.length < 126 ? 2 : body.length < 65536 ? 4 : 10;
  const f = Buffer.alloc(head + 4 + body.length);
  f[0] = (fin ? 0x80 : 0) | opcode;
  if (head === 2) f[1] = 0x80 | body.length;
  else if (head === 4) {
    f[1] = 0x80 | 126;
    f.writeUInt16BE(body.length, 2);
  } else {
    f[1] = 0x80 | 127;
    f.writeBigUInt64BE(BigInt(body.length), 2);
  }
  for (let i = 0; i < 4; i++) f[head + i] = mask[i]!;
  for (let i = 0; i < body.length; i++) f[head + 4 + i] = body[i]! ^ mask[i & 3]!;
  return f;
}

/** A JSON-RPC recvack exactly as the SDKs write it (the compact form). */
export const recvack = (id: string): string =>
  JSON.stringify({ jsonrpc: '2.0', method: 'recvack', params: { messageId: id, messageSeq: 1 } });

/** A JSON-RPC send of `n % 200` payload bytes beyond the rest. */
export const send = (n: number): string =>
  `{"jsonrpc":"2.0","method":"send","id":${n},"params":{"clientMsgNo":"c-${n}","channelId":"u2","channelType":1,"payload":{"b":"${'x'.repeat(n % 200)}"}}}`;
