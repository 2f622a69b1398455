import { useContext } from 'react';
import { FormGroup, FormSelect, FormSelectOption } from '@patternfly/react-core';
import { FieldError, FormDisabledContext } from '../../components/FormFields';

interface SelectFieldProps {
  id: string;
  label: string;
  value: string;
  onChange(value: string): void;
  /** value → already translated label, in order. */
  options: { value: string; label: string }[];
  /** The first, empty choice: "Select…" or "None". */
  placeholder: string;
  /** Whether the empty choice is a real value (a cleared optional field). */
  emptyIsValue?: boolean;
  /** A translated validation message. */
  error?: string;
  isRequired?: boolean;
}

/** A labelled select with its validation message, disabled while the form saves. */
export function SelectField({ id, label, value, onChange, options, placeholder, emptyIsValue, error, isRequired }: SelectFieldProps) {
  const saving = useContext(FormDisabledContext);
  return (
    <FormGroup label={label} fieldId={id} isRequired={isRequired}>
      <FormSelect
        id={id}
        value={value}
        onChange={(_event, next) => onChange(next)}
        validated={error ? 'error' : 'default'}
        isDisabled={saving}
        aria-label={label}
      >
        <FormSelectOption value="" label={placeholder} isPlaceholder={!emptyIsValue} />
        {options.map((o) => (
          <FormSelectOption key={o.value} value={o.value} label={o.label} />
        ))}
      </FormSelect>
      <FieldError error={error} />
    </FormGroup>
  );
}
