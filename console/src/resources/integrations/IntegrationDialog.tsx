import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { FormDialog } from '../../components/FormDialog';
import { TextField } from '../../components/FormFields';
import { useLazyValidation } from '../../components/useLazyValidation';
import { useProjectAccess } from '../../app/permissions';
import { authMethods } from './labels';
import { SelectField } from '../../components/SelectField';
import type { AuthMethod, Integration } from './types';
import { useKeyChoices, useSaveIntegration, useTemplateChoices } from './useIntegrations';
import { authFields, integrationPayload, validateIntegration, type IntegrationFormValues } from './validation';

/** The dialogs of integrations are at most 450 pixels wide (docs/features.md §2). */
export const INTEGRATION_DIALOG_WIDTH = 450;

function formValues(integration?: Integration): IntegrationFormValues {
  return {
    name: integration?.name ?? '',
    templateId: integration?.template_id ? String(integration.template_id) : '',
    authMethod: integration?.auth_method ?? '',
    authSecretId: integration?.auth_secret_id ? String(integration.auth_secret_id) : '',
    authHeader: integration?.auth_header ?? '',
  };
}

interface IntegrationDialogProps {
  /** The integration to edit; none for a new one. */
  integration?: Integration;
  onClose(): void;
}

/** New and edit integration (docs/features.md §3, §4, §5). */
export function IntegrationDialog({ integration, onClose }: IntegrationDialogProps) {
  const { t } = useTranslation('integrations');
  const { project } = useProjectAccess();
  const [values, setValues] = useState(() => formValues(integration));
  const { errors, check } = useLazyValidation(values, validateIntegration);
  const shown = authFields(values.authMethod);
  const templates = useTemplateChoices(project.id);
  const keys = useKeyChoices(project.id, shown.secret);
  const save = useSaveIntegration(project.id);
  const set = (patch: Partial<IntegrationFormValues>) => setValues((v) => ({ ...v, ...patch }));

  const onSave = () => {
    if (!check()) return;
    // searchable and task_params are not edited here; an edit keeps them.
    const body = {
      searchable: integration?.searchable ?? false,
      task_params: integration?.task_params,
      ...integrationPayload(values),
      ...(integration ? { id: integration.id } : {}),
    };
    save.mutate(body, { onSuccess: onClose });
  };
  const failure = save.error ?? templates.error ?? keys.error;

  return (
    <FormDialog
      title={integration ? t('Edit Integration') : t('New Integration')}
      saveLabel={integration ? t('Save') : t('Create')}
      isOpen
      onClose={onClose}
      onSave={onSave}
      isSaving={save.isPending}
      error={failure ? errorMessage(failure) : undefined}
      maxWidth={INTEGRATION_DIALOG_WIDTH}
    >
      <TextField
        id="integration-name"
        label={t('Name')}
        value={values.name}
        onChange={(name) => set({ name })}
        error={errors.name && t(errors.name)}
        isRequired
        autoFocus
      />
      <SelectField
        id="integration-template"
        label={t('Template')}
        value={values.templateId}
        onChange={(templateId) => set({ templateId })}
        placeholder={t('No template')}
        emptyIsValue
        options={(templates.data ?? []).map((tpl) => ({ value: String(tpl.id), label: tpl.name }))}
      />
      <SelectField
        id="integration-auth-method"
        label={t('Auth method')}
        value={values.authMethod}
        onChange={(authMethod) => set({ authMethod: authMethod as AuthMethod })}
        placeholder={t('None')}
        emptyIsValue
        options={authMethods.filter((m) => m.value !== '').map((m) => ({ value: m.value, label: t(m.label) }))}
      />
      {shown.secret && (
        <SelectField
          id="integration-auth-secret"
          label={t('Auth secret')}
          value={values.authSecretId}
          onChange={(authSecretId) => set({ authSecretId })}
          placeholder={t('No secret')}
          emptyIsValue
          options={(keys.data ?? [])
            .filter((key) => key.type === 'login_password')
            .map((key) => ({ value: String(key.id), label: key.name }))}
        />
      )}
      {shown.header && (
        <TextField
          id="integration-auth-header"
          label={t('Auth header')}
          value={values.authHeader}
          onChange={(authHeader) => set({ authHeader })}
          helper={t('The request header that carries the token or the signature.')}
        />
      )}
    </FormDialog>
  );
}
