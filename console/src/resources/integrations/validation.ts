// The integration forms' rules (docs/features.md §4, §5) as pure functions. Messages
// are English keys of the "integrations" catalog (or "common"), translated
// where they are shown.
import type { Errors } from '../../components/useLazyValidation';
import type { AuthMethod } from './types';

export interface IntegrationFormValues {
  name: string;
  /** A template id as the select holds it; "" for none. */
  templateId: string;
  authMethod: AuthMethod;
  /** A login_password key id; "" for none. */
  authSecretId: string;
  authHeader: string;
}

/** Integration (docs/features.md §5): only the name is required; the rest is optional and clearable. */
export function validateIntegration(values: IntegrationFormValues): Errors<'name'> {
  return { name: values.name.trim() ? undefined : 'Name is required' };
}

/**
 * Which auth fields the form shows (docs/features.md §4): the secret select once an
 * auth method is set, the header field only for token and hmac (GitHub
 * has its own header).
 */
export function authFields(method: AuthMethod): { secret: boolean; header: boolean } {
  return { secret: method !== '', header: method === 'token' || method === 'hmac' };
}

/**
 * The integration as PUT and POST take it. Fields the chosen method does
 * not use are cleared, so a secret or header left behind by an earlier
 * method is not kept.
 */
export function integrationPayload(values: IntegrationFormValues) {
  const shown = authFields(values.authMethod);
  return {
    name: values.name.trim(),
    template_id: values.templateId ? Number(values.templateId) : null,
    auth_method: values.authMethod,
    auth_secret_id: shown.secret && values.authSecretId ? Number(values.authSecretId) : null,
    auth_header: shown.header ? values.authHeader.trim() : '',
  };
}

export interface ExtractValueFormValues {
  name: string;
  valueSource: string;
  bodyDataType: string;
  key: string;
  variable: string;
}

/** Extracted value (docs/features.md §5): the body data type is required only when the source is the body. */
export function validateExtractValue(v: ExtractValueFormValues): Errors<keyof ExtractValueFormValues> {
  return {
    name: v.name.trim() ? undefined : 'Name is required',
    valueSource: v.valueSource ? undefined : 'Value source is required',
    bodyDataType: v.valueSource === 'body' && !v.bodyDataType ? 'Body data type is required' : undefined,
    key: v.key.trim() ? undefined : 'Key is required',
    variable: v.variable.trim() ? undefined : 'Variable is required',
  };
}

export interface MatcherFormValues {
  name: string;
  matchType: string;
  bodyDataType: string;
  key: string;
  method: string;
  value: string;
}

/** Matcher (docs/features.md §5): the body data type is required only when matching on the body. */
export function validateMatcher(v: MatcherFormValues): Errors<keyof MatcherFormValues> {
  return {
    name: v.name.trim() ? undefined : 'Name is required',
    matchType: v.matchType ? undefined : 'Match type is required',
    bodyDataType: v.matchType === 'body' && !v.bodyDataType ? 'Body data type is required' : undefined,
    key: v.key.trim() ? undefined : 'Key is required',
    method: v.method ? undefined : 'Method is required',
    value: v.value ? undefined : 'Value is required',
  };
}

/** Every message the rules above can give, for the catalog test. */
export const validationMessages = [
  'Name is required',
  'Value source is required',
  'Body data type is required',
  'Key is required',
  'Variable is required',
  'Match type is required',
  'Method is required',
  'Value is required',
] as const;
