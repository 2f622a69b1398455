import { describe, expect, it } from 'vitest';
import { applyStoredDarkMode, DARK_MODE_KEY } from './darkMode';

describe('applyStoredDarkMode', () => {
  it('switches PatternFly to dark when darkMode is "1", and back otherwise', () => {
    const root = document.createElement('html');

    localStorage.setItem(DARK_MODE_KEY, '1');
    applyStoredDarkMode(root);
    expect(root).toHaveClass('pf-v6-theme-dark');

    localStorage.setItem(DARK_MODE_KEY, '0');
    applyStoredDarkMode(root);
    expect(root).not.toHaveClass('pf-v6-theme-dark');
  });
});
