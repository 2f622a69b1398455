import { useState } from 'react';
import { FormGroup, FormSelect, FormSelectOption } from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { FormDialog } from '../../components/FormDialog';
import { FieldError } from '../../components/FormFields';
import { useLazyValidation } from '../../components/useLazyValidation';
import { useUsers } from '../users/useUsers';
import { roles } from './roles';
import { useLinkMember, type Member } from './useTeam';
import { validateMember, type MemberFormValues } from './validation';

interface TeamMemberDialogProps {
  projectId: number;
  members: Member[];
  onClose(): void;
}

/**
 * New team member (docs/features.md §2): a user who is not yet a member, shown as
 * "username (name)", and a role; the save button reads Link.
 */
export function TeamMemberDialog({ projectId, members, onClose }: TeamMemberDialogProps) {
  const { t } = useTranslation('team');
  const users = useUsers();
  const link = useLinkMember(projectId);
  const [values, setValues] = useState<MemberFormValues>({ userId: '', role: '' });
  const { errors, check } = useLazyValidation(values, validateMember);
  const memberIds = new Set(members.map((m) => m.id));
  const candidates = (users.data ?? []).filter((u) => !memberIds.has(u.id));

  const onSave = () => {
    if (!check()) return;
    link.mutate({ user_id: Number(values.userId), role: values.role }, { onSuccess: onClose });
  };
  const failure = link.error ?? users.error;

  return (
    <FormDialog
      title={t('New Team Member')}
      saveLabel={t('Link')}
      isOpen
      onClose={onClose}
      onSave={onSave}
      isSaving={link.isPending}
      error={failure ? errorMessage(failure) : undefined}
    >
      <FormGroup label={t('User')} fieldId="member-user" isRequired>
        <FormSelect
          id="member-user"
          value={values.userId}
          onChange={(_event, userId) => setValues((v) => ({ ...v, userId }))}
          validated={errors.userId ? 'error' : 'default'}
          isDisabled={link.isPending}
          aria-label={t('User')}
        >
          <FormSelectOption value="" label={t('Select a user')} isPlaceholder />
          {candidates.map((user) => (
            <FormSelectOption key={user.id} value={String(user.id)} label={`${user.username} (${user.name})`} />
          ))}
        </FormSelect>
        <FieldError error={errors.userId} />
      </FormGroup>
      <FormGroup label={t('Role')} fieldId="member-role" isRequired>
        <FormSelect
          id="member-role"
          value={values.role}
          onChange={(_event, role) => setValues((v) => ({ ...v, role }))}
          validated={errors.role ? 'error' : 'default'}
          isDisabled={link.isPending}
          aria-label={t('Role')}
        >
          <FormSelectOption value="" label={t('Select a role')} isPlaceholder />
          {roles.map((role) => (
            <FormSelectOption key={role.slug} value={role.slug} label={t(role.title)} />
          ))}
        </FormSelect>
        <FieldError error={errors.role} />
      </FormGroup>
    </FormDialog>
  );
}
