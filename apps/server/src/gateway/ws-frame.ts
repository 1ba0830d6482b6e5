/**
 * A complete server-to-client WebSocket text frame (RFC 6455: FIN, opcode 1,
 * no mask, no extension bits) holding `text` as UTF-8. Built once, the same
 * bytes can be written to every socket that is to get this text: a group
 * RECV is encoded and framed once, not once per recipient.
 */
import { Buffer } from 'node:buffer';
export function wsTextFrame(text: string): Buffer {
  return framed(text, Buffer.byteLength(text, 'utf8'), 'utf8');
}

/**
 * `wsTextFrame` of a text the caller knows is ASCII (a send result with a
 * numeric id: digits and JSON punctuation): its length is its UTF-8 byte
 * count and its bytes are its Latin-1 ones, so the text is neither measured
 * nor encoded as UTF-8. Once per send.
 */
export function wsAsciiTextFrame(text: string): Buffer {
  return framed(text, text.length, 'latin1');
}

function framed(text: string, length: number, encoding: 'utf8' | 'latin1'): Buffer {
  const header = length < 126 ? 2 : length <= 0xffff ? 4 : 10;
  const frame = Buffer.allocUnsafe(header + length);
  frame[0] = 0x81;
  if (header === 2) {
    frame[1] = length;
  } else if (header === 4) {
    frame[1] = 126;
    frame[2] = length >>> 8;
    frame[3] = length & 0xff;
  } else {
    frame[1] = 127;
    frame.writeUInt32BE(Math.floor(length / 2 ** 32), 2);
    frame.writeUInt32BE(length >>> 0, 6);
  }
  frame.write(text, header, encoding);
  return frame;
}
