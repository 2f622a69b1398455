// English labels of the integration enumerations, translated where shown
// with t() in the "integrations" namespace.
import type { AuthMethod, BodyDataType, MatchMethod, Source } from './types';

export const authMethods: { value: AuthMethod; label: string }[] = [
  { value: '', label: 'None' },
  { value: 'github', label: 'GitHub Webhooks' },
  { value: 'token', label: 'Token' },
  { value: 'hmac', label: 'HMAC' },
];

export const sources: { value: Source; label: string }[] = [
  { value: 'body', label: 'Body' },
  { value: 'header', label: 'Header' },
];

export const bodyDataTypes: { value: BodyDataType; label: string }[] = [
  { value: 'json', label: 'JSON' },
  { value: 'string', label: 'String' },
];

export const matchMethods: { value: MatchMethod; label: string }[] = [
  { value: 'equals', label: 'Equals' },
  { value: 'unequals', label: 'Unequals' },
  { value: 'contains', label: 'Contains' },
];

/** The English label of value in options, or value itself when unknown. */
export function labelOf<T extends string>(options: { value: T; label: string }[], value: string): string {
  return options.find((o) => o.value === value)?.label ?? value;
}
