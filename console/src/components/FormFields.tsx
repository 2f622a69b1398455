// The few form controls every form here is made of: a PatternFly FormGroup
// with its label, the control, and the field's validation message.
import { createContext, useContext, type ReactNode } from 'react';
import {
  Alert,
  Checkbox,
  FormGroup,
  FormHelperText,
  HelperText,
  HelperTextItem,
  TextInput,
  type TextInputProps,
} from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';

/** True while a form saves: every field under it is disabled (docs/features.md §4). */
export const FormDisabledContext = createContext(false);

/** A field's validation message, translated. */
export function FieldError({ error }: { error?: string }) {
  const { t } = useTranslation();
  if (!error) return null;
  return (
    <FormHelperText>
      <HelperText>
        <HelperTextItem variant="error">{t(error)}</HelperTextItem>
      </HelperText>
    </FormHelperText>
  );
}

/** Under a field: its validation message if it has one, else its help. */
export function FieldMessage({ error, helper }: { error?: string; helper?: ReactNode }) {
  if (error) return <FieldError error={error} />;
  if (!helper) return null;
  return (
    <FormHelperText>
      <HelperText>
        <HelperTextItem>{helper}</HelperTextItem>
      </HelperText>
    </FormHelperText>
  );
}

interface TextFieldProps {
  id: string;
  label: string;
  value: string;
  onChange(value: string): void;
  /** An English message key from the form's validation. */
  error?: string;
  isRequired?: boolean;
  isDisabled?: boolean;
  type?: TextInputProps['type'];
  inputMode?: TextInputProps['inputMode'];
  placeholder?: string;
  autoComplete?: string;
  autoFocus?: boolean;
  helper?: ReactNode;
  onKeyDown?: TextInputProps['onKeyDown'];
}

export function TextField({ id, label, value, onChange, error, helper, isRequired, isDisabled, ...input }: TextFieldProps) {
  const saving = useContext(FormDisabledContext);
  return (
    <FormGroup label={label} fieldId={id} isRequired={isRequired}>
      <TextInput
        id={id}
        name={id}
        value={value}
        onChange={(_event, next) => onChange(next)}
        validated={error ? 'error' : 'default'}
        isRequired={isRequired}
        isDisabled={saving || isDisabled}
        {...input}
      />
      <FieldMessage error={error} helper={helper} />
    </FormGroup>
  );
}

interface CheckboxFieldProps {
  id: string;
  label: string;
  checked: boolean;
  onChange(checked: boolean): void;
  isDisabled?: boolean;
  /** What the switch does, shown under its label. */
  description?: ReactNode;
}

export function CheckboxField({ id, label, checked, onChange, isDisabled, description }: CheckboxFieldProps) {
  const saving = useContext(FormDisabledContext);
  return (
    <FormGroup fieldId={id}>
      <Checkbox
        id={id}
        name={id}
        label={label}
        isChecked={checked}
        onChange={(_event, next) => onChange(next)}
        isDisabled={saving || isDisabled}
        description={description}
      />
    </FormGroup>
  );
}

/** A failed save (docs/features.md §8): the derived message in a red alert inside the form. */
export function SaveError({ message }: { message?: string }) {
  if (!message) return null;
  return <Alert variant="danger" isInline title={message} data-testid="save-error" />;
}
