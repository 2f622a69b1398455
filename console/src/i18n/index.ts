// Interface languages (docs/features.md §1). English text is the key, with one catalog
// per area (namespace); a key missing from a namespace is looked up in
// "common", where words every area uses (Cancel, Save…) live. Every English
// entry is its own key (a test checks), so English catalogs are never
// loaded: an English screen, or a word a language lacks, shows the key.
// Every other language's catalogs load when a screen first reads their
// namespace (react-i18next suspends that screen until then), and a
// language's catalogs load when it is chosen: the first page carries
// neither the other screens' words nor eleven languages nobody reads.
// Because keys are English, a catalog that fails to load leaves its screen
// in English rather than broken.
import i18n, { type BackendModule, type ReadCallback } from 'i18next';
import { initReactI18next } from 'react-i18next';
import { readSetting, settingKeys, writeSetting } from '../settings/settings';

export const languages = [
  'en', 'es', 'ru', 'de', 'zh_hans', 'zh_hant', 'fr', 'it', 'pl', 'pt', 'pt_br', 'nl',
] as const;
export type Language = (typeof languages)[number];

/** Each language's name in itself, as language menus show them. */
export const languageNames: Record<Language, string> = {
  en: 'English',
  es: 'Español',
  ru: 'Русский',
  de: 'Deutsch',
  zh_hans: '简体中文',
  zh_hant: '繁體中文',
  fr: 'Français',
  it: 'Italiano',
  pl: 'Polski',
  pt: 'Português',
  pt_br: 'Português (Brasil)',
  nl: 'Nederlands',
};

// BCP 47 tags for <html lang>, so the browser picks fonts and hyphenation.
const htmlLang: Record<Language, string> = {
  en: 'en', es: 'es', ru: 'ru', de: 'de', zh_hans: 'zh-Hans', zh_hant: 'zh-Hant', fr: 'fr',
  it: 'it', pl: 'pl', pt: 'pt', pt_br: 'pt-BR', nl: 'nl',
};

export const defaultNamespace = 'common';

type Catalog = Record<string, string>;

// A namespace that only a lazily loaded chunk reads may bring its catalogs
// with it (see ownCatalogs): left out here, its files cost the entry
// nothing, and every screen's first load keeps its budget.
const catalogs = import.meta.glob<Catalog>(['../locales/*/*.json', '!../locales/en/*.json', '!../locales/*/logviewer.json'], {
  import: 'default',
});

function fileParts(file: string): [lang: string, ns: string] {
  const [, lang, ns] = /locales\/([^/]+)\/([^/]+)\.json$/.exec(file) ?? [];
  return [lang, ns];
}

/** Every namespace there is (every language has a catalog of each). */
export const namespaces = [
  defaultNamespace,
  ...new Set(
    Object.keys(catalogs)
      .map(fileParts)
      .map(([, ns]) => ns)
      .filter((ns) => ns !== defaultNamespace),
  ),
];

// Reads a catalog file when i18next first needs a language's namespace.
const catalogBackend: BackendModule = {
  type: 'backend',
  init() {},
  read(lng: string, ns: string, callback: ReadCallback) {
    const load = catalogs[`../locales/${lng}/${ns}.json`];
    if (!load) {
      callback(null, {}); // English, or no such catalog: the English key shows
      return;
    }
    load().then(
      (catalog) => callback(null, catalog),
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), false),
    );
  },
};

function isLanguage(value: string | null): value is Language {
  return languages.includes(value as Language);
}

/** The language chosen earlier on this browser, or English. */
export function storedLanguage(): Language {
  const stored = readSetting(settingKeys.language);
  return isLanguage(stored) ? stored : 'en';
}

/**
 * Loads a language's catalogs of every namespace read so far (the ones
 * read later load with their screens).
 */
export async function loadLanguage(lng: Language): Promise<void> {
  await i18n.loadLanguages(lng);
}

/** Loads namespaces for the current language (tests read every screen's). */
export async function loadNamespaces(ns: readonly string[]): Promise<void> {
  await i18n.loadNamespaces([...ns]);
}

export async function initI18n(lng: Language = storedLanguage()): Promise<void> {
  await i18n
    .use(catalogBackend)
    .use(initReactI18next)
    .init({
      lng: 'en',
      fallbackLng: 'en',
      ns: [defaultNamespace],
      defaultNS: defaultNamespace,
      fallbackNS: defaultNamespace,
      // Keys are English sentences, which may contain '.' or ':'.
      keySeparator: false,
      nsSeparator: false,
      // React escapes what it renders.
      interpolation: { escapeValue: false },
      returnEmptyString: false,
    });
  await applyLanguage(lng);
}

async function applyLanguage(lng: Language): Promise<void> {
  try {
    await loadLanguage(lng);
  } catch {
    lng = 'en'; // a catalog that fails to load must not keep the console from starting
  }
  await i18n.changeLanguage(lng);
  document.documentElement.lang = htmlLang[lng];
}

/** Switches the interface language and keeps the choice on this browser. */
export async function chooseLanguage(lng: Language): Promise<void> {
  writeSetting(settingKeys.language, lng);
  await applyLanguage(lng);
}

/** The current interface language. */
export function currentLanguage(): Language {
  return isLanguage(i18n.language) ? i18n.language : 'en';
}

export default i18n;
