/**
 * A complete server-to-client WebSocket text frame (RFC 6455: FIN, opcode 1,
 * no mask, no extension bits) holding `text` as UTF-8. Built once, the same
 * bytes can be written to every socket that is to get this text: a group
 * RECV is encoded and framed once, not once per recipient.
 */
export function wsTextFrame(text: string): Buffer {
  const length = Buffer.byteLength(text, 'utf8');
  const header = length < 126 ? 2 : length <= 0xffff ? 4 : 10;
  const frame = Buffer.allocUnsafe(header + length);
  frame[0] = 0x81;
  if (header === 2) {
    frame[1] = length;
  } else if (header === 4) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    frame.writeUInt32BE(Math.floor(length / 2 ** 32), 2);
    frame.writeUInt32BE(length >>> 0, 6);
  }
  frame.write(text, header, 'utf8');
  return frame;
}
