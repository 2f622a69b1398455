import type { Errors } from '../../components/useLazyValidation';
import { msg } from '../../i18n/msg';

export interface Credentials {
  auth: string;
  password: string;
}

/** Sign in (docs/features.md §5): username and password are required. */
export function validateCredentials({ auth, password }: Credentials): Errors<'auth' | 'password'> {
  return {
    auth: auth.trim() ? undefined : msg('Username is required'),
    password: password ? undefined : msg('Password is required'),
  };
}
