// Interface languages (spec §1). English text is the key, with one catalog
// per area (namespace); a key missing from a namespace is looked up in
// "common", where words every area uses (Cancel, Save…) live. English is
// bundled; another language's catalogs load when it is chosen, so the first
// page does not carry eleven languages nobody reads.
import i18n, { type Resource } from 'i18next';
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

const englishCatalogs = import.meta.glob<Catalog>('../locales/en/*.json', {
  eager: true,
  import: 'default',
});
const lazyCatalogs = import.meta.glob<Catalog>(['../locales/*/*.json', '!../locales/en/*.json'], {
  import: 'default',
});

function fileParts(file: string): [lang: string, ns: string] {
  const [, lang, ns] = /locales\/([^/]+)\/([^/]+)\.json$/.exec(file) ?? [];
  return [lang, ns];
}

export const namespaces = Object.keys(englishCatalogs).map((file) => fileParts(file)[1]);

function englishResources(): Resource {
  const en: Record<string, Catalog> = {};
  for (const [file, catalog] of Object.entries(englishCatalogs)) en[fileParts(file)[1]] = catalog;
  return { en };
}

function isLanguage(value: string | null): value is Language {
  return languages.includes(value as Language);
}

/** The language chosen earlier on this browser, or English. */
export function storedLanguage(): Language {
  const stored = readSetting(settingKeys.language);
  return isLanguage(stored) ? stored : 'en';
}

/** Loads a language's catalogs into i18next (English is always there). */
export async function loadLanguage(lng: Language): Promise<void> {
  if (lng === 'en' || i18n.hasResourceBundle(lng, defaultNamespace)) return;
  const files = Object.keys(lazyCatalogs).filter((file) => fileParts(file)[0] === lng);
  await Promise.all(
    files.map(async (file) => {
      i18n.addResourceBundle(lng, fileParts(file)[1], await lazyCatalogs[file](), true, true);
    }),
  );
}

export async function initI18n(lng: Language = storedLanguage()): Promise<void> {
  await i18n.use(initReactI18next).init({
    resources: englishResources(),
    lng: 'en',
    fallbackLng: 'en',
    ns: namespaces,
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
