import { useTranslation } from 'react-i18next';
import { useNotify } from '../../app/Notifications';
import { useProjectAccess } from '../../app/permissions';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import type { Integration } from './types';
import { useDeleteIntegration } from './useIntegrations';

/** docs/features.md §2, §8: deleting an integration is confirmed; its aliases go with it. */
export function DeleteIntegrationDialog({ integration, onClose }: { integration: Integration; onClose(): void }) {
  const { t } = useTranslation('integrations');
  const { project } = useProjectAccess();
  const notify = useNotify();
  const remove = useDeleteIntegration(project.id);
  const confirm = () =>
    remove.mutate(integration, {
      onSuccess: onClose,
      onError: (error) => {
        onClose();
        notify.error(error);
      },
    });
  return (
    <ConfirmDialog title={t('Delete Integration')} confirmLabel={t('Delete')} isOpen isBusy={remove.isPending} onConfirm={confirm} onClose={onClose}>
      {t('Are you sure you want to delete this Integration?')}
    </ConfirmDialog>
  );
}
