// Browser preferences (language, dark mode) are kept in localStorage, as the
// spec asks. Reading must never break startup: some privacy modes throw.
export function readPreference(key: string): string | null {
  try {
    return window.localStorage.getItem(key);
  } catch {
    return null;
  }
}
