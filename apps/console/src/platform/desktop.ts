import type { WkDesktop } from '../../host/contract.ts';
import type { Platform } from './platform.ts';

/** The host API over the preload bridge to Electron's main process. */
export function desktopPlatform(bridge: WkDesktop): Platform {
  return { kind: 'desktop', host: bridge, capabilities: { hostKeepsTokens: true, persistentNodes: true } };
}
