import { Socket } from 'node:net';

/**
 * A socket's libuv handle, read the one way every path of this folder reads
 * it (the direct writer on each write, `takeReads` and the read pump once per
 * socket).
 *
 * `socket._handle` is a getter on `Socket.prototype` returning
 * `this[kHandle]`, shared by every kind of socket in the process, so its
 * look-up of the symbol is megamorphic (~200 instructions a call); read at a
 * site of its own that sees only the sockets passed here, it is not. The
 * symbol is found once, and kept only when the getter is seen to read it;
 * otherwise (Node keeps the handle some other way) `_handle` is read.
 */
const kHandle = handleSymbol();

function handleSymbol(): symbol | undefined {
  const getter = Object.getOwnPropertyDescriptor(Socket.prototype, '_handle')?.get;
  if (getter === undefined) return undefined;
  const probe = new Socket() as unknown as Record<symbol, unknown>;
  const sym = Object.getOwnPropertySymbols(probe).find((k) => k.description === 'kHandle');
  if (sym === undefined) return undefined;
  // The getter must read that slot: a marker put there must come back as the probe's handle.
  const marker = {};
  probe[sym] = marker;
  const same = getter.call(probe) === marker;
  probe[sym] = null;
  (probe as unknown as Socket).destroy();
  return same ? sym : undefined;
}

/** Whether handles are read through Node's symbol (false: through the `_handle` getter). */
export const handleBySymbol = kHandle !== undefined;

/** `socket._handle`, typed as the caller uses it. */
export function handleOf<H extends object>(socket: Socket): H | null | undefined {
  return kHandle !== undefined
    ? (socket as unknown as Record<symbol, H | null | undefined>)[kHandle]
    : (socket as unknown as { _handle?: H | null })._handle;
}
