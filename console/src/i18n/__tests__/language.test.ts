import { describe, expect, it } from 'vitest';
import i18n, { LANGUAGE_KEY, storedLanguage } from '..';

describe('interface language', () => {
  it('is the one stored under "lang"', () => {
    localStorage.setItem(LANGUAGE_KEY, 'pt_br');
    expect(storedLanguage()).toBe('pt_br');
  });

  it('falls back to English when nothing or an unknown language is stored', () => {
    expect(storedLanguage()).toBe('en');
    localStorage.setItem(LANGUAGE_KEY, 'klingon');
    expect(storedLanguage()).toBe('en');
  });

  it('translates with the underscore language codes the catalogs use', () => {
    expect(i18n.getFixedT('pt_br')('Refresh page')).toBe('Atualizar página');
    expect(i18n.getFixedT('zh_hant')('Re-login')).toBe('重新登入');
  });
});
