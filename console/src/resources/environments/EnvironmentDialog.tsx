import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { FormDialog } from '../../components/FormDialog';
import { TextField } from '../../components/FormFields';
import { TextAreaField } from '../../components/TextAreaField';
import { hasErrors, useLazyValidation } from '../../components/useLazyValidation';
import { rowsOf, secretOperations } from './secrets';
import { SecretsEditor } from './SecretsEditor';
import type { Environment } from './types';
import { useSaveEnvironment } from './useEnvironments';
import { validateEnvironment, type EnvironmentFormValues } from './validation';

interface EnvironmentDialogProps {
  projectId: number;
  environment?: Environment;
  onClose(): void;
}

/** New and edit environment (docs/features.md §2, §3, §5): both JSON texts default to {}. */
export function EnvironmentDialog({ projectId, environment, onClose }: EnvironmentDialogProps) {
  const { t } = useTranslation('resources');
  const save = useSaveEnvironment(projectId);
  const [values, setValues] = useState<EnvironmentFormValues>({
    name: environment?.name ?? '',
    json: pretty(environment?.json),
    env: pretty(environment?.env),
    secrets: rowsOf(environment?.secrets),
  });
  const { errors, check } = useLazyValidation(values, validateEnvironment);
  const set = (field: 'name' | 'json' | 'env') => (value: string) => setValues((v) => ({ ...v, [field]: value }));
  const error = (message?: string) => message && t(message);

  const onSave = () => {
    if (!check()) return;
    save.mutate(
      {
        ...(environment && { id: environment.id }),
        project_id: projectId,
        name: values.name.trim(),
        json: values.json.trim() || '{}',
        env: values.env.trim() || '{}',
        secrets: secretOperations(values.secrets),
      },
      { onSuccess: onClose },
    );
  };

  return (
    <FormDialog
      title={environment ? t('Edit Environment') : t('New Environment')}
      saveLabel={environment ? t('Save') : t('Create')}
      isOpen
      onClose={onClose}
      onSave={onSave}
      isSaving={save.isPending}
      error={save.error ? errorMessage(save.error) : undefined}
    >
      <TextField id="environment-name" label={t('Name')} value={values.name} onChange={set('name')} error={error(errors.name)} isRequired autoFocus />
      <TextAreaField
        id="environment-json"
        label={t('Extra variables')}
        value={values.json}
        onChange={set('json')}
        error={error(errors.json)}
        isCode
        rows={5}
        helper={t('A JSON object, passed to Ansible as --extra-vars')}
      />
      <TextAreaField
        id="environment-env"
        label={t('Environment variables')}
        value={values.env}
        onChange={set('env')}
        error={error(errors.env)}
        isCode
        rows={5}
        helper={t('A JSON object of names and values, set in the process environment')}
      />
      <SecretsEditor
        rows={values.secrets}
        onChange={(secrets) => setValues((v) => ({ ...v, secrets }))}
        showErrors={hasErrors(errors)}
      />
    </FormDialog>
  );
}

/** Stored JSON is compact; an editor shows it indented. Both default to {}. */
function pretty(text: string | undefined): string {
  if (!text?.trim()) return '{}';
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && Object.keys(value).length > 0 ? JSON.stringify(value, null, 2) : '{}';
  } catch {
    return text;
  }
}
