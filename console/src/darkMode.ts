import { readPreference } from './storage';

export const DARK_MODE_KEY = 'darkMode';

// PatternFly 6 switches every component to its dark palette with this class on <html>.
const DARK_THEME_CLASS = 'pf-v6-theme-dark';

/** Applies the stored dark mode choice ('1' means dark) to the document. */
export function applyStoredDarkMode(root: HTMLElement = document.documentElement): void {
  root.classList.toggle(DARK_THEME_CLASS, readPreference(DARK_MODE_KEY) === '1');
}
