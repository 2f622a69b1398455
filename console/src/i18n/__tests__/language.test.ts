import { describe, expect, it } from 'vitest';
import i18n, { chooseLanguage, loadLanguage, storedLanguage } from '..';
import { settingKeys } from '../../settings/settings';

describe('interface language', () => {
  it('is the one stored under "lang"', () => {
    localStorage.setItem(settingKeys.language, 'pt_br');
    expect(storedLanguage()).toBe('pt_br');
  });

  it('falls back to English when nothing or an unknown language is stored', () => {
    expect(storedLanguage()).toBe('en');
    localStorage.setItem(settingKeys.language, 'klingon');
    expect(storedLanguage()).toBe('en');
  });

  it('translates with the underscore language codes the catalogs use, once loaded', async () => {
    await loadLanguage('pt_br');
    await loadLanguage('zh_hant');
    expect(i18n.getFixedT('pt_br')('Refresh page')).toBe('Atualizar página');
    expect(i18n.getFixedT('zh_hant')('Re-login')).toBe('重新登入');
    expect(i18n.getFixedT('pt_br', 'users')('New user')).not.toBe('New user');
  });

  it('is kept on this browser when chosen, and sets <html lang>', async () => {
    await chooseLanguage('de');
    expect(localStorage.getItem(settingKeys.language)).toBe('de');
    expect(document.documentElement.lang).toBe('de');
    expect(i18n.t('Sign out')).toBe('Abmelden');
    await chooseLanguage('en');
  });

  it('falls back to English for a key a catalog lacks', async () => {
    await loadLanguage('fr');
    expect(i18n.getFixedT('fr')('A sentence no catalog has')).toBe('A sentence no catalog has');
  });
});
