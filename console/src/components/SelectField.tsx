// A labelled select in the shape of FormFields' TextField, disabled while
// the form saves (docs/features.md §4) or while its options load.
import { useContext, type ReactNode } from 'react';
import { FormGroup, FormSelect, FormSelectOption } from '@patternfly/react-core';
import { FieldMessage, FormDisabledContext } from './FormFields';

export interface SelectOption {
  value: string;
  label: string;
}

interface SelectFieldProps {
  id: string;
  label: string;
  value: string;
  /** Already translated labels, in order. */
  options: SelectOption[];
  /** The empty first choice ("Select a key", "None"…), if there is one. */
  placeholder?: string;
  /** Whether that empty choice is a real value (a cleared optional field) rather than a prompt. */
  emptyIsValue?: boolean;
  onChange(value: string): void;
  /** A validation message (an English key, or already translated). */
  error?: string;
  helper?: ReactNode;
  isRequired?: boolean;
  isDisabled?: boolean;
  isLoading?: boolean;
}

export function SelectField(props: SelectFieldProps) {
  const { id, label, value, options, placeholder, emptyIsValue, onChange, error, helper, isRequired, isDisabled, isLoading } =
    props;
  const saving = useContext(FormDisabledContext);
  return (
    <FormGroup label={label} fieldId={id} isRequired={isRequired}>
      <FormSelect
        id={id}
        value={value}
        onChange={(_event, next) => onChange(next)}
        validated={error ? 'error' : 'default'}
        isDisabled={saving || isDisabled || isLoading}
        isRequired={isRequired}
        aria-label={label}
      >
        {placeholder !== undefined && <FormSelectOption value="" label={placeholder} isPlaceholder={!emptyIsValue} />}
        {options.map((option) => (
          <FormSelectOption key={option.value} value={option.value} label={option.label} />
        ))}
      </FormSelect>
      <FieldMessage error={error} helper={helper} />
    </FormGroup>
  );
}
