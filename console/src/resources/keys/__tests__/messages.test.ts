// The forms' messages are English keys that the screens translate with the
// "resources" catalog (falling back to "common"); the catalog test cannot
// see them, since they reach t() as values. This one does.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { languages } from '../../../i18n';

const locales = join(import.meta.dirname, '..', '..', '..', 'locales');
const catalog = (lang: string, ns: string) => JSON.parse(readFileSync(join(locales, lang, `${ns}.json`), 'utf8')) as Record<string, string>;

const messages = [
  'Name is required',
  'Type is required',
  'Password is required',
  'Private key is required',
  'Repository is required',
  'Incorrect URL',
  'Branch is required',
  'Key is required',
  'User credentials is required',
  'Path to Inventory file is required',
  'Environment and extra variables must be valid JSON',
  'Use only letters, digits, "-", "." and "_"',
];

describe('the resource forms’ messages', () => {
  it.each(languages)('are translated in %s', (lang) => {
    const known = { ...catalog(lang, 'common'), ...catalog(lang, 'resources') };
    expect(messages.filter((m) => !known[m]?.trim())).toEqual([]);
  });
});
