import { useEffect, useState } from 'react';

/** The current time, refreshed every `everyMs` (for "updated N s ago" and stale marks). */
export function useNow(everyMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const id = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(id);
  }, [everyMs]);
  return now;
}
