import { createContext, useContext, type ReactNode } from 'react';
import { desktopPlatform } from './desktop.ts';
import type { Platform } from './platform.ts';
import { webPlatform } from './web.ts';

/** Desktop when the preload exposed its bridge, web otherwise. */
export function detectPlatform(): Platform {
  return window.wkDesktop ? desktopPlatform(window.wkDesktop) : webPlatform();
}

const PlatformContext = createContext<Platform | null>(null);

export function PlatformProvider({ platform, children }: { platform: Platform; children: ReactNode }) {
  return <PlatformContext.Provider value={platform}>{children}</PlatformContext.Provider>;
}

export function usePlatform(): Platform {
  const p = useContext(PlatformContext);
  if (!p) throw new Error('usePlatform outside PlatformProvider');
  return p;
}
