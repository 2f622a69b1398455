import { useContext } from 'react';
import { FormGroup, FormHelperText, FormSelect, FormSelectOption, HelperText, HelperTextItem } from '@patternfly/react-core';
import { FieldError, FormDisabledContext } from '../../components/FormFields';

interface SelectFieldProps {
  id: string;
  label: string;
  value: string;
  onChange(value: string): void;
  options: { value: string; label: string }[];
  /** The first option, for "none" or "choose one"; omitted when a value is always set. */
  placeholder?: string;
  /** A translated validation message. */
  error?: string;
  helper?: string;
  isRequired?: boolean;
  isLoading?: boolean;
}

/** A labelled select of the editor, disabled while the form saves. */
export function SelectField({ id, label, value, onChange, options, placeholder, error, helper, isRequired, isLoading }: SelectFieldProps) {
  const saving = useContext(FormDisabledContext);
  return (
    <FormGroup label={label} fieldId={id} isRequired={isRequired}>
      <FormSelect
        id={id}
        value={value}
        onChange={(_event, next) => onChange(next)}
        validated={error ? 'error' : 'default'}
        isDisabled={saving || isLoading}
        isRequired={isRequired}
      >
        {placeholder !== undefined && <FormSelectOption value="" label={placeholder} />}
        {options.map((option) => (
          <FormSelectOption key={option.value} value={option.value} label={option.label} />
        ))}
      </FormSelect>
      {error ? (
        <FieldError error={error} />
      ) : (
        helper && (
          <FormHelperText>
            <HelperText>
              <HelperTextItem>{helper}</HelperTextItem>
            </HelperText>
          </FormHelperText>
        )
      )}
    </FormGroup>
  );
}
