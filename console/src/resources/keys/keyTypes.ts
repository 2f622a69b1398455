import { useTranslation } from 'react-i18next';
import type { KeyType } from './types';

/** A key type as the list names it. */
export function useKeyTypeTitle() {
  const { t } = useTranslation('resources');
  return (type: KeyType | string) =>
    ({ ssh: t('SSH Key'), login_password: t('Login with password'), none: t('None') })[type] ?? type;
}
