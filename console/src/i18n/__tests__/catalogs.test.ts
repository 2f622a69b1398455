// Catalogs are read from disk, not through i18next, so a gap cannot be hidden
// by the English fallback.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { languages } from '..';

const srcDir = join(import.meta.dirname, '..', '..');
const localesDir = join(srcDir, 'locales');

function readCatalog(lang: string, file: string): Record<string, string> {
  return JSON.parse(readFileSync(join(localesDir, lang, file), 'utf8')) as Record<string, string>;
}

const namespaceFiles = readdirSync(join(localesDir, 'en'));

describe('translation catalogs', () => {
  it('exist for exactly the supported languages', () => {
    expect(readdirSync(localesDir).sort()).toEqual([...languages].sort());
  });

  describe.each(languages.filter((lang) => lang !== 'en'))('%s', (lang) => {
    it.each(namespaceFiles)('%s has every key English has, translated', (file) => {
      const english = readCatalog('en', file);
      const catalog = readCatalog(lang, file);
      const missing = Object.keys(english).filter((key) => !catalog[key]?.trim());
      expect(missing).toEqual([]);
    });

    it.each(namespaceFiles)('%s has no key English lacks', (file) => {
      const english = readCatalog('en', file);
      const stale = Object.keys(readCatalog(lang, file)).filter((key) => !(key in english));
      expect(stale).toEqual([]);
    });
  });

  // A literal t('...') whose key is not in English would show the raw key
  // and never reach the translators.
  it('English has every key the source code uses', () => {
    const english = Object.assign({}, ...namespaceFiles.map((file) => readCatalog('en', file)));
    const sources = readdirSync(srcDir, { recursive: true, encoding: 'utf8' }).filter(
      (file) => /\.tsx?$/.test(file) && !file.includes('__tests__'),
    );
    const unknown: string[] = [];
    for (const file of sources) {
      const text = readFileSync(join(srcDir, file), 'utf8');
      for (const [, key] of text.matchAll(/\bt\(\s*'((?:[^'\\]|\\.)+)'/g)) {
        if (!(key in english)) unknown.push(`${relative(srcDir, join(srcDir, file))}: ${key}`);
      }
    }
    expect(unknown).toEqual([]);
  });
});
