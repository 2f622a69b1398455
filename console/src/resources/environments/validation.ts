import type { Errors } from '../../components/useLazyValidation';
import { secretNameError, type SecretRow } from './secrets';

export interface EnvironmentFormValues {
  name: string;
  json: string;
  env: string;
  secrets: SecretRow[];
}

export type EnvironmentField = 'name' | 'json' | 'env' | 'secrets';

export const invalidJson = 'Environment and extra variables must be valid JSON';

/** The text of a JSON object; empty text means {} (as the server reads it). */
export function isJsonObject(text: string): boolean {
  if (!text.trim()) return true;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

/**
 * Environment (docs/features.md §5): name required; extra variables and environment
 * variables must be valid JSON (objects). Each secret needs a name the
 * server accepts.
 */
export function validateEnvironment(v: EnvironmentFormValues): Errors<EnvironmentField> {
  const errors: Errors<EnvironmentField> = {};
  if (!v.name.trim()) errors.name = 'Name is required';
  if (!isJsonObject(v.json)) errors.json = invalidJson;
  if (!isJsonObject(v.env)) errors.env = invalidJson;
  const secretError = v.secrets.map(secretNameError).find(Boolean);
  if (secretError) errors.secrets = secretError;
  return errors;
}
