import { useState } from 'react';
import { FormGroup, FormSelect, FormSelectOption } from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';
import { FormDialog } from '../../components/FormDialog';
import { CheckboxField, TextField } from '../../components/FormFields';
import { useLazyValidation } from '../../components/useLazyValidation';
import type { SurveyVar } from './types';
import { normalizeSurveyVar, validateSurveyVar } from './validation';

interface SurveyVarDialogProps {
  /** The variable to edit; undefined adds one. */
  variable?: SurveyVar;
  onSave(variable: SurveyVar): void;
  onClose(): void;
}

const blank: SurveyVar = { name: '', title: '', description: '', type: '', required: false };

/**
 * The survey variable editor (docs/features.md §2, §5): name and title required, the
 * name trimmed; type string (stored as "") or int. It edits the template's
 * form; the template's Save sends it.
 */
export function SurveyVarDialog({ variable, onSave, onClose }: SurveyVarDialogProps) {
  const { t } = useTranslation('templates');
  const [values, setValues] = useState<SurveyVar>(variable ?? blank);
  const { errors, check } = useLazyValidation(values, validateSurveyVar);
  const set = <K extends keyof SurveyVar>(key: K) => (value: SurveyVar[K]) => setValues((v) => ({ ...v, [key]: value }));
  const save = () => {
    if (!check()) return;
    onSave(normalizeSurveyVar(values));
  };
  return (
    <FormDialog
      title={variable ? t('Edit survey variable') : t('New survey variable')}
      saveLabel={variable ? t('Save') : t('Add')}
      isOpen
      onClose={onClose}
      onSave={save}
      isSaving={false}
    >
      <TextField id="survey-name" label={t('Name')} value={values.name} onChange={set('name')} error={errors.name && t(errors.name)} isRequired autoFocus />
      <TextField id="survey-title" label={t('Title')} value={values.title} onChange={set('title')} error={errors.title && t(errors.title)} isRequired />
      <TextField id="survey-description" label={t('Description')} value={values.description} onChange={set('description')} />
      <FormGroup label={t('Type')} fieldId="survey-type">
        <FormSelect id="survey-type" value={values.type} onChange={(_event, type) => set('type')(type as SurveyVar['type'])}>
          <FormSelectOption value="" label={t('String')} />
          <FormSelectOption value="int" label={t('Integer')} />
        </FormSelect>
      </FormGroup>
      <CheckboxField id="survey-required" label={t('Required')} checked={values.required} onChange={set('required')} />
    </FormDialog>
  );
}
