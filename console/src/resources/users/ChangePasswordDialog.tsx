import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { useNotify } from '../../app/Notifications';
import { TextField } from '../../components/FormFields';
import { FormDialog } from '../../components/FormDialog';
import { useLazyValidation } from '../../components/useLazyValidation';
import type { User } from './types';
import { useChangePassword } from './useUsers';
import { validatePassword } from './validation';

/** Change password (docs/features.md §2, §5), for oneself or, by an admin, for anyone. */
export function ChangePasswordDialog({ user, onClose }: { user: User; onClose(): void }) {
  const { t } = useTranslation('users');
  const notify = useNotify();
  const change = useChangePassword(user.id);
  const [values, setValues] = useState({ password: '' });
  const { errors, check } = useLazyValidation(values, validatePassword);

  const onSave = () => {
    if (!check()) return;
    change.mutate(values.password, {
      onSuccess: () => {
        notify.success(t('Password of {{name}} changed', { name: user.username }));
        onClose();
      },
    });
  };
  return (
    <FormDialog
      title={t('Change password')}
      saveLabel={t('Save')}
      isOpen
      onClose={onClose}
      onSave={onSave}
      isSaving={change.isPending}
      error={change.error ? errorMessage(change.error) : undefined}
    >
      <TextField
        id="new-password"
        label={t('New password')}
        type="password"
        value={values.password}
        onChange={(password) => setValues({ password })}
        error={errors.password}
        isRequired
        autoFocus
        autoComplete="new-password"
      />
    </FormDialog>
  );
}
