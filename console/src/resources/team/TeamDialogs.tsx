// The team's confirmations, loaded when first opened (see app/lazyPages.tsx).
import { useTranslation } from 'react-i18next';
import { useNotify } from '../../app/Notifications';
import { useProjectAccess } from '../../app/permissions';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { useLeaveProject, useRemoveMember, type Member } from './useTeam';

export function RemoveMemberDialog({ member, onClose }: { member: Member; onClose(): void }) {
  const { t } = useTranslation('team');
  const { project } = useProjectAccess();
  const notify = useNotify();
  const remove = useRemoveMember(project.id);
  const confirm = () =>
    remove.mutate(member, {
      onSuccess: onClose,
      onError: (error) => {
        onClose();
        notify.error(error);
      },
    });
  return (
    <ConfirmDialog title={t('Remove team member')} confirmLabel={t('Remove')} isOpen isBusy={remove.isPending} onConfirm={confirm} onClose={onClose}>
      {t('Are you sure you want to remove {{name}} from the team?', { name: member.username })}
    </ConfirmDialog>
  );
}

/** Leaving reloads the page (docs/features.md §4): the project is no longer the user's. */
export function LeaveProjectDialog({ onClose }: { onClose(): void }) {
  const { t } = useTranslation('team');
  const { project } = useProjectAccess();
  const notify = useNotify();
  const leave = useLeaveProject(project.id);
  const confirm = () =>
    leave.mutate(undefined, {
      onSuccess: () => window.location.assign('/'),
      onError: (error) => {
        onClose();
        notify.error(error);
      },
    });
  return (
    <ConfirmDialog title={t('Leave Project')} confirmLabel={t('Leave')} isOpen isBusy={leave.isPending} onConfirm={confirm} onClose={onClose}>
      {t('Are you sure you want to leave the project {{name}}?', { name: project.name })}
    </ConfirmDialog>
  );
}
