import { describe, expect, it } from 'vitest';
import { applyStoredDarkMode, setDarkMode } from '../darkMode';
import { lastProject, lastView, rememberProject, rememberView, settingKeys } from '../settings';

describe('local settings (spec §9)', () => {
  it('keeps dark mode and applies PatternFly dark theme', () => {
    const root = document.createElement('html');
    setDarkMode(true, root);
    expect(localStorage.getItem(settingKeys.darkMode)).toBe('1');
    expect(root).toHaveClass('pf-v6-theme-dark');

    setDarkMode(false, root);
    expect(root).not.toHaveClass('pf-v6-theme-dark');
    localStorage.setItem(settingKeys.darkMode, '1');
    applyStoredDarkMode(root);
    expect(root).toHaveClass('pf-v6-theme-dark');
  });

  it('keeps the last project', () => {
    expect(lastProject()).toBeUndefined();
    rememberProject(7);
    expect(lastProject()).toBe(7);
    localStorage.setItem(settingKeys.lastProject, 'garbage');
    expect(lastProject()).toBeUndefined();
  });

  it('keeps the last view per project', () => {
    rememberView(7, 3);
    rememberView(8, 4);
    expect(lastView(7)).toBe(3);
    expect(lastView(8)).toBe(4);
    rememberView(7, null);
    expect(lastView(7)).toBeUndefined();
  });
});
