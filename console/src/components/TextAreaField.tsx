// A multi-line field in the shape of FormFields' TextField: label, control,
// the field's message, disabled while the form saves (docs/features.md §4). Code (JSON,
// INI, YAML, private keys) is shown in a monospace font.
import { useContext, type ReactNode } from 'react';
import { FormGroup, TextArea } from '@patternfly/react-core';
import { FieldMessage, FormDisabledContext } from './FormFields';

interface TextAreaFieldProps {
  id: string;
  label: string;
  value: string;
  onChange(value: string): void;
  /** An already translated message. */
  error?: string;
  isRequired?: boolean;
  isDisabled?: boolean;
  isCode?: boolean;
  rows?: number;
  placeholder?: string;
  helper?: ReactNode;
}

export function TextAreaField({ id, label, value, onChange, error, isRequired, isDisabled, isCode, rows = 6, placeholder, helper }: TextAreaFieldProps) {
  const saving = useContext(FormDisabledContext);
  return (
    <FormGroup label={label} fieldId={id} isRequired={isRequired}>
      <TextArea
        id={id}
        name={id}
        value={value}
        onChange={(_event, next) => onChange(next)}
        validated={error ? 'error' : 'default'}
        isRequired={isRequired}
        isDisabled={saving || isDisabled}
        rows={rows}
        resizeOrientation="vertical"
        placeholder={placeholder}
        spellCheck={isCode ? false : undefined}
        style={isCode ? { fontFamily: 'var(--pf-t--global--font--family--mono)', fontSize: '0.875rem' } : undefined}
      />
      <FieldMessage error={error} helper={helper} />
    </FormGroup>
  );
}
