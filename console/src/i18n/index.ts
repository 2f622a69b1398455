// Interface languages. English text is the key, so a missing translation still
// reads as English; catalogs are bundled, so no request is made for them.
import i18n, { type Resource } from 'i18next';
import { initReactI18next } from 'react-i18next';
import { readPreference } from '../storage';

export const languages = [
  'en', 'es', 'ru', 'de', 'zh_hans', 'zh_hant', 'fr', 'it', 'pl', 'pt', 'pt_br', 'nl',
] as const;
export type Language = (typeof languages)[number];

export const LANGUAGE_KEY = 'lang';
export const defaultNamespace = 'common';

const catalogs = import.meta.glob<Record<string, string>>('../locales/*/*.json', {
  eager: true,
  import: 'default',
});

function bundledResources(): Resource {
  const resources: Resource = {};
  for (const [file, catalog] of Object.entries(catalogs)) {
    const [, lang, ns] = /locales\/([^/]+)\/([^/]+)\.json$/.exec(file) ?? [];
    resources[lang] = { ...resources[lang], [ns]: catalog };
  }
  return resources;
}

function isLanguage(value: string | null): value is Language {
  return languages.includes(value as Language);
}

/** The language chosen earlier on this browser, or English. */
export function storedLanguage(): Language {
  const stored = readPreference(LANGUAGE_KEY);
  return isLanguage(stored) ? stored : 'en';
}

export function initI18n(lng: Language = storedLanguage()) {
  return i18n.use(initReactI18next).init({
    resources: bundledResources(),
    lng,
    fallbackLng: 'en',
    ns: [defaultNamespace],
    defaultNS: defaultNamespace,
    // Keys are English sentences, which may contain '.' or ':'.
    keySeparator: false,
    nsSeparator: false,
    // React escapes what it renders.
    interpolation: { escapeValue: false },
    returnEmptyString: false,
  });
}

export default i18n;
