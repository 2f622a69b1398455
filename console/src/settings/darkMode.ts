import { readSetting, settingKeys, writeSetting } from './settings';

// PatternFly 6 switches every component to its dark palette with this class on <html>.
const DARK_THEME_CLASS = 'pf-v6-theme-dark';

export function storedDarkMode(): boolean {
  return readSetting(settingKeys.darkMode) === '1';
}

/** Applies the stored dark mode choice ('1' means dark) to the document. */
export function applyStoredDarkMode(root: HTMLElement = document.documentElement): void {
  root.classList.toggle(DARK_THEME_CLASS, storedDarkMode());
}

/** Keeps the choice and applies it at once. */
export function setDarkMode(dark: boolean, root: HTMLElement = document.documentElement): void {
  writeSetting(settingKeys.darkMode, dark ? '1' : '0');
  applyStoredDarkMode(root);
}
