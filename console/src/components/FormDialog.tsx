import type { FormEvent, ReactNode } from 'react';
import { Button, Form, Modal, ModalBody, ModalFooter, ModalHeader } from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';
import { FormDisabledContext, SaveError } from './FormFields';

interface FormDialogProps {
  title: string;
  /** The save button's text: Create, Save, Link… */
  saveLabel: string;
  isOpen: boolean;
  onClose(): void;
  /** Called on save (button or Enter); validates, then calls the API. */
  onSave(): void;
  isSaving: boolean;
  /** The derived message of a failed save (docs/features.md §8). */
  error?: string;
  /** Largest width in pixels; PatternFly's small modal otherwise. */
  maxWidth?: number;
  children: ReactNode;
}

/**
 * One dialog for new and edit (docs/features.md §4): idle, saving (every input
 * disabled, the button spinning) and error (a red alert above the fields).
 */
export function FormDialog({ title, saveLabel, isOpen, onClose, onSave, isSaving, error, maxWidth, children }: FormDialogProps) {
  const { t } = useTranslation();
  const formId = `${title.replace(/\W+/g, '-').toLowerCase()}-form`;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!isSaving) onSave();
  };
  return (
    <Modal
      variant="small"
      isOpen={isOpen}
      onClose={isSaving ? undefined : onClose}
      aria-labelledby={`${formId}-title`}
      style={maxWidth ? { maxWidth } : undefined}
    >
      <ModalHeader title={title} labelId={`${formId}-title`} />
      <ModalBody>
        <Form id={formId} onSubmit={submit} noValidate>
          <SaveError message={error} />
          <FormDisabledContext.Provider value={isSaving}>{children}</FormDisabledContext.Provider>
          {/* Enter in any field submits, as a form with a submit button does. */}
          <button type="submit" hidden aria-hidden />
        </Form>
      </ModalBody>
      <ModalFooter>
        <Button type="submit" form={formId} variant="primary" isLoading={isSaving} isDisabled={isSaving}>
          {saveLabel}
        </Button>
        <Button variant="link" onClick={onClose} isDisabled={isSaving}>
          {t('Cancel')}
        </Button>
      </ModalFooter>
    </Modal>
  );
}
