/**
 * Marks an English text as a translation key (in the "common" catalog) where
 * it is written down before anything can translate it, as validation rules
 * are. The catalog test finds these as it finds calls of t().
 */
export function msg<const T extends string>(text: T): T {
  return text;
}
