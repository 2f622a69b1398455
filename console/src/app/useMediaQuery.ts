import { useSyncExternalStore } from 'react';

/** Whether a CSS media query matches, following changes. */
export function useMediaQuery(query: string): boolean {
  return useSyncExternalStore(
    (onChange) => {
      const list = window.matchMedia(query);
      list.addEventListener('change', onChange);
      return () => list.removeEventListener('change', onChange);
    },
    () => window.matchMedia(query).matches,
  );
}

/** docs/features.md §9: the drawer is fixed at 960 pixels and wider, and toggled below. */
export const MOBILE_BREAKPOINT_PX = 960;
export const desktopQuery = `(min-width: ${MOBILE_BREAKPOINT_PX}px)`;
