import '@testing-library/jest-dom/vitest';
import { cleanup, configure } from '@testing-library/react';
import { afterEach, vi } from 'vitest';
import { initI18n, loadNamespaces, namespaces } from '../i18n';

// jsdom has no layout: every media query answers as a desktop browser would
// (the drawer's 960-pixel query matches).
Object.defineProperty(window, 'matchMedia', {
  writable: true,
  value: (query: string) => ({
    matches: /min-width/.test(query),
    media: query,
    onchange: null,
    addEventListener: () => {},
    removeEventListener: () => {},
    addListener: () => {},
    removeListener: () => {},
    dispatchEvent: () => false,
  }),
});

// The machine running the tests is shared and slow to render PatternFly.
configure({ asyncUtilTimeout: 5000 });

await initI18n('en');
// Screens suspend until their catalogs load; tests render them at once.
await loadNamespaces(namespaces);

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  vi.useRealTimers();
  localStorage.clear();
  document.cookie = 'semaphore=; Max-Age=0; Path=/';
});
