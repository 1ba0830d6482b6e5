import type { WkDesktop } from '../../host/contract.ts';

/**
 * Where the console runs. Features ask `capabilities`, never "is this
 * Electron": the host API has the same shape on both platforms (the
 * contract in host/contract.ts), only its transport differs.
 */
export interface Platform {
  kind: 'web' | 'desktop';
  host: WkDesktop;
  capabilities: {
    /** Node tokens are kept by the host and never reach the page (both platforms). */
    hostKeepsTokens: boolean;
    /** Node list and tokens survive a restart (desktop: saved in the user data folder). */
    persistentNodes: boolean;
  };
}

declare global {
  interface Window {
    wkDesktop?: WkDesktop;
  }
}
