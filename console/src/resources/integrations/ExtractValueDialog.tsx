import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { FormDialog } from '../../components/FormDialog';
import { TextField } from '../../components/FormFields';
import { useLazyValidation } from '../../components/useLazyValidation';
import { useProjectAccess } from '../../app/permissions';
import { INTEGRATION_DIALOG_WIDTH } from './IntegrationDialog';
import { bodyDataTypes, sources } from './labels';
import { SelectField } from '../../components/SelectField';
import type { BodyDataType, ExtractValue, Source } from './types';
import { useSaveIntegrationItem } from './useIntegrationItems';
import { validateExtractValue, type ExtractValueFormValues } from './validation';

interface ExtractValueDialogProps {
  integrationId: number;
  /** The value to edit; none for a new one. */
  value?: ExtractValue;
  onClose(): void;
}

/** New and edit extracted value (docs/features.md §3, §5): a part of the request that becomes a task variable. */
export function ExtractValueDialog({ integrationId, value, onClose }: ExtractValueDialogProps) {
  const { t } = useTranslation('integrations');
  const { project } = useProjectAccess();
  const [values, setValues] = useState<ExtractValueFormValues>({
    name: value?.name ?? '',
    valueSource: value?.value_source ?? '',
    bodyDataType: value?.body_data_type ?? '',
    key: value?.key ?? '',
    variable: value?.variable ?? '',
  });
  const { errors, check } = useLazyValidation(values, validateExtractValue);
  const save = useSaveIntegrationItem(project.id, integrationId, 'values');
  const set = (patch: Partial<ExtractValueFormValues>) => setValues((v) => ({ ...v, ...patch }));
  const fromBody = values.valueSource === 'body';

  const onSave = () => {
    if (!check()) return;
    save.mutate(
      {
        ...(value ? { id: value.id } : {}),
        name: values.name.trim(),
        value_source: values.valueSource as Source,
        // A header has no body data type (docs/features.md §3).
        body_data_type: fromBody ? (values.bodyDataType as BodyDataType) : '',
        key: values.key.trim(),
        variable: values.variable.trim(),
      },
      { onSuccess: onClose },
    );
  };

  return (
    <FormDialog
      title={value ? t('Edit Extracted Value') : t('New Extracted Value')}
      saveLabel={value ? t('Save') : t('Create')}
      isOpen
      onClose={onClose}
      onSave={onSave}
      isSaving={save.isPending}
      error={save.error ? errorMessage(save.error) : undefined}
      maxWidth={INTEGRATION_DIALOG_WIDTH}
    >
      <TextField id="value-name" label={t('Name')} value={values.name} onChange={(name) => set({ name })} error={errors.name && t(errors.name)} isRequired autoFocus />
      <SelectField
        id="value-source"
        label={t('Value source')}
        value={values.valueSource}
        onChange={(valueSource) => set({ valueSource })}
        placeholder={t('Select a source')}
        options={sources.map((s) => ({ value: s.value, label: t(s.label) }))}
        error={errors.valueSource && t(errors.valueSource)}
        isRequired
      />
      {fromBody && (
        <SelectField
          id="value-body-data-type"
          label={t('Body data type')}
          value={values.bodyDataType}
          onChange={(bodyDataType) => set({ bodyDataType })}
          placeholder={t('Select a data type')}
          options={bodyDataTypes.map((d) => ({ value: d.value, label: t(d.label) }))}
          error={errors.bodyDataType && t(errors.bodyDataType)}
          isRequired
        />
      )}
      <TextField
        id="value-key"
        label={t('Key')}
        value={values.key}
        onChange={(key) => set({ key })}
        error={errors.key && t(errors.key)}
        helper={fromBody ? t('For a JSON body, a path such as commits.0.id.') : t('The header name.')}
        isRequired
      />
      <TextField
        id="value-variable"
        label={t('Environment variable')}
        value={values.variable}
        onChange={(variable) => set({ variable })}
        error={errors.variable && t(errors.variable)}
        isRequired
      />
    </FormDialog>
  );
}
