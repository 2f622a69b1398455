import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { FormDialog } from '../../components/FormDialog';
import { TextField } from '../../components/FormFields';
import { useLazyValidation } from '../../components/useLazyValidation';
import { useProjectAccess } from '../../app/permissions';
import { INTEGRATION_DIALOG_WIDTH } from './IntegrationDialog';
import { bodyDataTypes, matchMethods, sources } from './labels';
import { SelectField } from '../../components/SelectField';
import type { BodyDataType, Matcher, MatchMethod, Source } from './types';
import { useSaveIntegrationItem } from './useIntegrationItems';
import { validateMatcher, type MatcherFormValues } from './validation';

interface MatcherDialogProps {
  integrationId: number;
  /** The matcher to edit; none for a new one. */
  matcher?: Matcher;
  onClose(): void;
}

/** New and edit matcher (docs/features.md §3, §5): one condition every request must meet. */
export function MatcherDialog({ integrationId, matcher, onClose }: MatcherDialogProps) {
  const { t } = useTranslation('integrations');
  const { project } = useProjectAccess();
  const [values, setValues] = useState<MatcherFormValues>({
    name: matcher?.name ?? '',
    matchType: matcher?.match_type ?? '',
    bodyDataType: matcher?.body_data_type ?? '',
    key: matcher?.key ?? '',
    method: matcher?.method ?? '',
    value: matcher?.value ?? '',
  });
  const { errors, check } = useLazyValidation(values, validateMatcher);
  const save = useSaveIntegrationItem(project.id, integrationId, 'matchers');
  const set = (patch: Partial<MatcherFormValues>) => setValues((v) => ({ ...v, ...patch }));
  const onBody = values.matchType === 'body';

  const onSave = () => {
    if (!check()) return;
    save.mutate(
      {
        ...(matcher ? { id: matcher.id } : {}),
        name: values.name.trim(),
        match_type: values.matchType as Source,
        // A header has no body data type (docs/features.md §3).
        body_data_type: onBody ? (values.bodyDataType as BodyDataType) : '',
        key: values.key.trim(),
        method: values.method as MatchMethod,
        value: values.value,
      },
      { onSuccess: onClose },
    );
  };

  return (
    <FormDialog
      title={matcher ? t('Edit Matcher') : t('New Matcher')}
      saveLabel={matcher ? t('Save') : t('Create')}
      isOpen
      onClose={onClose}
      onSave={onSave}
      isSaving={save.isPending}
      error={save.error ? errorMessage(save.error) : undefined}
      maxWidth={INTEGRATION_DIALOG_WIDTH}
    >
      <TextField id="matcher-name" label={t('Name')} value={values.name} onChange={(name) => set({ name })} error={errors.name && t(errors.name)} isRequired autoFocus />
      <SelectField
        id="matcher-match-type"
        label={t('Match type')}
        value={values.matchType}
        onChange={(matchType) => set({ matchType })}
        placeholder={t('Select a source')}
        options={sources.map((s) => ({ value: s.value, label: t(s.label) }))}
        error={errors.matchType && t(errors.matchType)}
        isRequired
      />
      {onBody && (
        <SelectField
          id="matcher-body-data-type"
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
        id="matcher-key"
        label={t('Key')}
        value={values.key}
        onChange={(key) => set({ key })}
        error={errors.key && t(errors.key)}
        helper={onBody ? t('For a JSON body, a path such as commits.0.id.') : t('The header name.')}
        isRequired
      />
      <SelectField
        id="matcher-method"
        label={t('Method')}
        value={values.method}
        onChange={(method) => set({ method })}
        placeholder={t('Select a method')}
        options={matchMethods.map((m) => ({ value: m.value, label: t(m.label) }))}
        error={errors.method && t(errors.method)}
        isRequired
      />
      <TextField id="matcher-value" label={t('Value')} value={values.value} onChange={(value) => set({ value })} error={errors.value && t(errors.value)} isRequired />
    </FormDialog>
  );
}
