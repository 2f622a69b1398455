import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { FormDialog } from '../../components/FormDialog';
import { CheckboxField, TextField } from '../../components/FormFields';
import { SelectField } from '../../components/SelectField';
import { TextAreaField } from '../../components/TextAreaField';
import { useLazyValidation } from '../../components/useLazyValidation';
import type { Key, KeyType } from './types';
import { useSaveKey } from './useKeys';
import { validateKey, type KeyFormValues } from './validation';

interface KeyDialogProps {
  projectId: number;
  /** The key to edit; none for a new key. */
  keyItem?: Key;
  onClose(): void;
}

/**
 * New and edit key (docs/features.md §2, §4). A read never returns secrets, so an
 * existing key's type and secret fields stay locked, and are not sent as
 * changed, unless "Override secret" is checked.
 */
export function KeyDialog({ projectId, keyItem, onClose }: KeyDialogProps) {
  const { t } = useTranslation('resources');
  const save = useSaveKey(projectId);
  const [override, setOverride] = useState(false);
  const [values, setValues] = useState<Omit<KeyFormValues, 'secretEditable'>>({
    name: keyItem?.name ?? '',
    type: keyItem?.type ?? '',
    login: '',
    password: '',
    passphrase: '',
    privateKey: '',
  });
  const secretEditable = !keyItem || override;
  const form = { ...values, secretEditable };
  const { errors, check } = useLazyValidation(form, validateKey);
  const set = (field: keyof typeof values) => (value: string) => setValues((v) => ({ ...v, [field]: value }));
  const error = (message?: string) => message && t(message);

  const onSave = () => {
    if (!check()) return;
    save.mutate(
      {
        ...(keyItem && { id: keyItem.id }),
        project_id: projectId,
        name: values.name.trim(),
        type: values.type as KeyType,
        override_secret: !!keyItem && override,
        ssh: { login: values.login, passphrase: values.passphrase, private_key: values.privateKey },
        login_password: { login: values.login, password: values.password },
      },
      { onSuccess: onClose },
    );
  };

  return (
    <FormDialog
      title={keyItem ? t('Edit Key') : t('New Key')}
      saveLabel={keyItem ? t('Save') : t('Create')}
      isOpen
      onClose={onClose}
      onSave={onSave}
      isSaving={save.isPending}
      error={save.error ? errorMessage(save.error) : undefined}
    >
      <TextField id="key-name" label={t('Name')} value={values.name} onChange={set('name')} error={error(errors.name)} isRequired autoFocus />
      {keyItem && (
        <CheckboxField id="key-override" label={t('Override secret')} checked={override} onChange={setOverride} />
      )}
      <SelectField
        id="key-type"
        label={t('Type')}
        value={values.type}
        placeholder={values.type ? undefined : t('Select a type')}
        options={[
          { value: 'ssh', label: t('SSH Key') },
          { value: 'login_password', label: t('Login with password') },
          { value: 'none', label: t('None') },
        ]}
        onChange={set('type')}
        error={error(errors.type)}
        isRequired
        isDisabled={!secretEditable}
      />
      {values.type === 'ssh' && (
        <>
          <TextField id="key-login" label={t('Login (optional)')} value={values.login} onChange={set('login')} isDisabled={!secretEditable} autoComplete="off" />
          <TextField
            id="key-passphrase"
            label={t('Passphrase (optional)')}
            type="password"
            value={values.passphrase}
            onChange={set('passphrase')}
            isDisabled={!secretEditable}
            autoComplete="new-password"
          />
          <TextAreaField
            id="key-private-key"
            label={t('Private Key')}
            value={values.privateKey}
            onChange={set('privateKey')}
            error={error(errors.privateKey)}
            isRequired={secretEditable}
            isDisabled={!secretEditable}
            isCode
            placeholder={secretEditable ? '-----BEGIN OPENSSH PRIVATE KEY-----' : t('The stored secret is kept')}
          />
        </>
      )}
      {values.type === 'login_password' && (
        <>
          <TextField id="key-login" label={t('Login (optional)')} value={values.login} onChange={set('login')} isDisabled={!secretEditable} autoComplete="off" />
          <TextField
            id="key-password"
            label={t('Password')}
            type="password"
            value={values.password}
            onChange={set('password')}
            error={error(errors.password)}
            isRequired={secretEditable}
            isDisabled={!secretEditable}
            autoComplete="new-password"
            helper={secretEditable ? undefined : t('The stored secret is kept')}
          />
        </>
      )}
    </FormDialog>
  );
}
