// A labelled select in the shape of FormFields' TextField, disabled while
// the form saves (spec §4).
import { useContext } from 'react';
import { FormGroup, FormSelect, FormSelectOption } from '@patternfly/react-core';
import { FieldError, FormDisabledContext } from './FormFields';

export interface SelectOption {
  value: string;
  label: string;
}

interface SelectFieldProps {
  id: string;
  label: string;
  value: string;
  options: SelectOption[];
  /** The empty choice's text ("Select a key", "None"…), if there is one. */
  placeholder?: string;
  onChange(value: string): void;
  /** An already translated message. */
  error?: string;
  isRequired?: boolean;
  isDisabled?: boolean;
}

export function SelectField({ id, label, value, options, placeholder, onChange, error, isRequired, isDisabled }: SelectFieldProps) {
  const saving = useContext(FormDisabledContext);
  return (
    <FormGroup label={label} fieldId={id} isRequired={isRequired}>
      <FormSelect
        id={id}
        value={value}
        onChange={(_event, next) => onChange(next)}
        validated={error ? 'error' : 'default'}
        isDisabled={saving || isDisabled}
        aria-label={label}
      >
        {placeholder !== undefined && <FormSelectOption value="" label={placeholder} />}
        {options.map((option) => (
          <FormSelectOption key={option.value} value={option.value} label={option.label} />
        ))}
      </FormSelect>
      <FieldError error={error} />
    </FormGroup>
  );
}
