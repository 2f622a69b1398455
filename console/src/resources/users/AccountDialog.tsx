import { useTranslation } from 'react-i18next';
import { useSession } from '../../app/SessionContext';
import { UserDialog } from './UserDialog';

/** Edit account (docs/features.md §2): the user dialog, on the signed-in user. */
export function AccountDialog({ onClose }: { onClose(): void }) {
  const { t } = useTranslation('users');
  const { user } = useSession();
  return <UserDialog user={user} onClose={onClose} title={t('Edit account')} />;
}
