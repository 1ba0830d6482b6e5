import { HOST_CHANNELS, type HostHandlers } from '../host/contract.ts';
import { fail } from '../host/handlers.ts';

/** The part of Electron's `ipcMain` this needs (so tests pass a fake). */
export interface IpcMainLike {
  handle(channel: string, listener: (event: { senderFrame?: { url: string } | null }, payload?: unknown) => unknown): void;
}

/** The origin the console's own pages are served from in Electron. */
export const APP_ORIGIN = 'app://console';

/** True for a frame of the console itself (not a page it might have been navigated to). */
export function isConsoleFrame(url: string | undefined): boolean {
  return url !== undefined && (url === APP_ORIGIN || url.startsWith(`${APP_ORIGIN}/`));
}

/**
 * Registers the host handlers on exactly the contract's channels. Every
 * call is checked: it must come from the console's own frame, and each
 * handler validates its payload itself (the renderer is not trusted).
 */
export function registerIpc(
  ipcMain: IpcMainLike,
  handlers: HostHandlers,
  isTrusted: (frameUrl: string | undefined) => boolean = isConsoleFrame,
): void {
  for (const channel of HOST_CHANNELS) {
    ipcMain.handle(channel, async (event, payload) => {
      if (!isTrusted(event.senderFrame?.url)) return fail('invalid_request', 'request from a frame outside the console');
      return handlers[channel](payload);
    });
  }
}
