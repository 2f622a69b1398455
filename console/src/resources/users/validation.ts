import type { Errors } from '../../components/useLazyValidation';
import { msg } from '../../i18n/msg';

export interface UserFormValues {
  name: string;
  username: string;
  email: string;
  password: string;
  alert: boolean;
  admin: boolean;
  canCreateProject: boolean;
}

/**
 * User (docs/features.md §5): name, username and email are required; the password only
 * for a new user (an existing one changes it in its own dialog).
 */
export function validateUser(values: UserFormValues, isNew: boolean): Errors<'name' | 'username' | 'email' | 'password'> {
  return {
    name: values.name.trim() ? undefined : msg('Name is required'),
    username: values.username.trim() ? undefined : msg('Username is required'),
    email: values.email.trim() ? undefined : msg('Email is required'),
    password: !isNew || values.password ? undefined : msg('Password is required'),
  };
}

/** Change password (docs/features.md §5): the password is required. */
export function validatePassword({ password }: { password: string }): Errors<'password'> {
  return { password: password ? undefined : msg('Password is required') };
}
