import { useTranslation } from 'react-i18next';
import { useNotify } from '../../app/Notifications';
import { useProjectAccess } from '../../app/permissions';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { useDeleteIntegrationItem, type ItemKind } from './useIntegrationItems';

interface DeleteItemDialogProps {
  integrationId: number;
  kind: ItemKind;
  item: { id: number; name: string };
  onClose(): void;
}

// A matcher or an extracted value decides which requests start a task and
// with what: removing one by a stray click would change deployments
// silently, so it is confirmed like the integration itself.
export function DeleteItemDialog({ integrationId, kind, item, onClose }: DeleteItemDialogProps) {
  const { t } = useTranslation('integrations');
  const { project } = useProjectAccess();
  const notify = useNotify();
  const remove = useDeleteIntegrationItem(project.id, integrationId, kind);
  const confirm = () =>
    remove.mutate(item.id, {
      onSuccess: onClose,
      onError: (error) => {
        onClose();
        notify.error(error);
      },
    });
  return (
    <ConfirmDialog
      title={kind === 'matchers' ? t('Delete Matcher') : t('Delete Extracted Value')}
      confirmLabel={t('Delete')}
      isOpen
      isBusy={remove.isPending}
      onConfirm={confirm}
      onClose={onClose}
    >
      {kind === 'matchers'
        ? t('Are you sure you want to delete the matcher {{name}}?', { name: item.name })
        : t('Are you sure you want to delete the extracted value {{name}}?', { name: item.name })}
    </ConfirmDialog>
  );
}
