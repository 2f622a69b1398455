// Catalogs are read from disk, not through i18next, so a gap cannot be hidden
// by the English fallback.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { languages } from '..';

const srcDir = join(import.meta.dirname, '..', '..');
const localesDir = join(srcDir, 'locales');

function readCatalog(lang: string, file: string): Record<string, string> {
  return JSON.parse(readFileSync(join(localesDir, lang, file), 'utf8')) as Record<string, string>;
}

const namespaceFiles = readdirSync(join(localesDir, 'en'));
const english = (ns: string) => readCatalog('en', `${ns}.json`);

// Interpolations ({{name}}) must survive translation, or the value is lost.
const placeholders = (text: string) => [...text.matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1]).sort();

describe('translation catalogs', () => {
  it('exist for exactly the supported languages', () => {
    expect(readdirSync(localesDir).sort()).toEqual([...languages].sort());
  });

  // The console never loads English catalogs (src/i18n/index.ts): it shows
  // the key. An English entry that said something else would never show.
  it.each(namespaceFiles)('English %s says exactly its keys', (file) => {
    const differing = Object.entries(english(file.replace(/\.json$/, ''))).filter(([key, text]) => key !== text);
    expect(differing).toEqual([]);
  });

  describe.each(languages.filter((lang) => lang !== 'en'))('%s', (lang) => {
    it.each(namespaceFiles)('%s has every key English has, translated', (file) => {
      const catalog = readCatalog(lang, file);
      const missing = Object.keys(readCatalog('en', file)).filter((key) => !catalog[key]?.trim());
      expect(missing).toEqual([]);
    });

    it.each(namespaceFiles)('%s has no key English lacks', (file) => {
      const en = readCatalog('en', file);
      const stale = Object.keys(readCatalog(lang, file)).filter((key) => !(key in en));
      expect(stale).toEqual([]);
    });

    it.each(namespaceFiles)('%s keeps every {{placeholder}}', (file) => {
      const catalog = readCatalog(lang, file);
      const broken = Object.keys(readCatalog('en', file)).filter(
        (key) => catalog[key] && placeholders(catalog[key]).join() !== placeholders(key).join(),
      );
      expect(broken).toEqual([]);
    });
  });

  // A literal t('...') whose key is not in English would show the raw key and
  // never reach the translators. A file reads its own namespace (the one it
  // passes to useTranslation) and falls back to "common", as i18next does;
  // msg('...') marks keys for "common".
  it('English has every key the source code uses, in the namespace that reads it', () => {
    const sources = readdirSync(srcDir, { recursive: true, encoding: 'utf8' }).filter(
      (file) => /\.tsx?$/.test(file) && !file.includes('__tests__') && !/\.test\.tsx?$/.test(file),
    );
    const unknown: string[] = [];
    for (const file of sources) {
      const text = readFileSync(join(srcDir, file), 'utf8');
      const ns = /useTranslation\(\s*'([^']+)'/.exec(text)?.[1] ?? 'common';
      const known = { ...english('common'), ...english(ns) };
      for (const [, , key] of text.matchAll(/\bt\(\s*(['"])((?:(?!\1)[^\\]|\\.)+)\1/g)) {
        if (!(key in known)) unknown.push(`${file}: ${key}`);
      }
      for (const [, , key] of text.matchAll(/\bmsg\(\s*(['"])((?:(?!\1)[^\\]|\\.)+)\1/g)) {
        if (!(key in english('common'))) unknown.push(`${file}: ${key}`);
      }
    }
    expect(unknown).toEqual([]);
  });
});
