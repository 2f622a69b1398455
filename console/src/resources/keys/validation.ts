import type { Errors } from '../../components/useLazyValidation';
import type { KeyType } from './types';

export interface KeyFormValues {
  name: string;
  type: KeyType | '';
  /** True for a new key, or an existing one with "override secret" set. */
  secretEditable: boolean;
  login: string;
  password: string;
  passphrase: string;
  privateKey: string;
}

export type KeyField = 'name' | 'type' | 'password' | 'privateKey';

/**
 * Key (docs/features.md §5): name required; when secrets are editable, type required,
 * password for login_password, private key for ssh. Messages are English
 * keys of the "resources" catalog.
 */
export function validateKey(v: KeyFormValues): Errors<KeyField> {
  const errors: Errors<KeyField> = {};
  if (!v.name.trim()) errors.name = 'Name is required';
  if (!v.secretEditable) return errors;
  if (!v.type) errors.type = 'Type is required';
  if (v.type === 'login_password' && !v.password) errors.password = 'Password is required';
  if (v.type === 'ssh' && !v.privateKey.trim()) errors.privateKey = 'Private key is required';
  return errors;
}
