import { useState } from 'react';
import { Alert } from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { useNotify } from '../../app/Notifications';
import { useSession } from '../../app/SessionContext';
import { CheckboxField, TextField } from '../../components/FormFields';
import { FormDialog } from '../../components/FormDialog';
import { useLazyValidation } from '../../components/useLazyValidation';
import type { User } from './types';
import { useCreateUser, useUpdateUser, type UserRequest } from './useUsers';
import { validateUser, type UserFormValues } from './validation';

function formValues(user?: User): UserFormValues {
  return {
    name: user?.name ?? '',
    username: user?.username ?? '',
    email: user?.email ?? '',
    password: '',
    alert: user?.alert ?? false,
    admin: user?.admin ?? false,
    canCreateProject: user?.can_create_project ?? false,
  };
}

function request(values: UserFormValues, isNew: boolean): UserRequest {
  return {
    name: values.name.trim(),
    username: values.username.trim(),
    email: values.email.trim(),
    alert: values.alert,
    admin: values.admin,
    can_create_project: values.canCreateProject,
    ...(isNew && { password: values.password }),
  };
}

interface UserDialogProps {
  /** The user to edit; none for a new one. */
  user?: User;
  onClose(): void;
  title?: string;
}

/**
 * New and edit user (docs/features.md §5): name, username and email are required, the
 * password only for a new user; an external user's fields belong to their
 * identity provider; only admins see the admin checkbox.
 */
export function UserDialog({ user, onClose, title }: UserDialogProps) {
  const { t } = useTranslation('users');
  const session = useSession();
  const notify = useNotify();
  const isNew = !user;
  const create = useCreateUser();
  const update = useUpdateUser(user?.id ?? 0);
  const save = isNew ? create : update;
  const [values, setValues] = useState(() => formValues(user));
  const { errors, check } = useLazyValidation(values, (v) => validateUser(v, isNew));
  const external = !!user?.external;
  const isAdmin = session.user.admin;
  const set = <K extends keyof UserFormValues>(key: K) => (value: UserFormValues[K]) =>
    setValues((v) => ({ ...v, [key]: value }));

  const onSave = () => {
    if (!check()) return;
    const body = request(values, isNew);
    save.mutate(body, {
      onSuccess: () => {
        notify.success(
          isNew ? t('User {{name}} created', { name: body.username }) : t('User {{name}} saved', { name: body.username }),
        );
        onClose();
      },
    });
  };

  return (
    <FormDialog
      title={title ?? (isNew ? t('New user') : t('Edit user'))}
      saveLabel={isNew ? t('Create') : t('Save')}
      isOpen
      onClose={onClose}
      onSave={onSave}
      isSaving={save.isPending}
      error={save.error ? errorMessage(save.error) : undefined}
    >
      {external && (
        <Alert
          variant="info"
          isInline
          isPlain
          title={t('This user signs in through an identity provider, which sets their name, username and email.')}
        />
      )}
      <TextField id="user-name" label={t('Name')} value={values.name} onChange={set('name')} error={errors.name} isRequired isDisabled={external} autoFocus />
      <TextField id="user-username" label={t('Username')} value={values.username} onChange={set('username')} error={errors.username} isRequired isDisabled={external} autoComplete="off" />
      <TextField id="user-email" label={t('Email')} type="email" value={values.email} onChange={set('email')} error={errors.email} isRequired isDisabled={external} autoComplete="off" />
      {isNew && (
        <TextField id="user-password" label={t('Password')} type="password" value={values.password} onChange={set('password')} error={errors.password} isRequired autoComplete="new-password" />
      )}
      <CheckboxField
        id="user-alert"
        label={t('Send alerts')}
        checked={values.alert}
        onChange={set('alert')}
        description={t('Alerts go by email to this address when a task fails, or succeeds unless its template suppresses success alerts, in a project that allows alerts. Each holds the project, template, status and version, who started the task, when, how long it ran, its message, the last 20 lines of output and a link to the task.')}
      />
      {isAdmin && <CheckboxField id="user-admin" label={t('Admin user')} checked={values.admin} onChange={set('admin')} />}
      {isAdmin && (
        <CheckboxField id="user-can-create-project" label={t('Can create projects')} checked={values.canCreateProject} onChange={set('canCreateProject')} />
      )}
    </FormDialog>
  );
}
