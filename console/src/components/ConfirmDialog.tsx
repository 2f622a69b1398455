import type { ReactNode } from 'react';
import { Button, Modal, ModalBody, ModalFooter, ModalHeader } from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';

interface ConfirmDialogProps {
  title: string;
  /** The confirming button's text, e.g. Delete. */
  confirmLabel: string;
  isOpen: boolean;
  isBusy?: boolean;
  onConfirm(): void;
  onClose(): void;
  children: ReactNode;
}

/** Asks before something that cannot be undone (docs/features.md §8: delete confirmations). */
export function ConfirmDialog({ title, confirmLabel, isOpen, isBusy, onConfirm, onClose, children }: ConfirmDialogProps) {
  const { t } = useTranslation();
  return (
    <Modal variant="small" isOpen={isOpen} onClose={isBusy ? undefined : onClose} aria-labelledby="confirm-title">
      <ModalHeader title={title} labelId="confirm-title" titleIconVariant="warning" />
      <ModalBody>{children}</ModalBody>
      <ModalFooter>
        <Button variant="danger" onClick={onConfirm} isLoading={isBusy} isDisabled={isBusy}>
          {confirmLabel}
        </Button>
        <Button variant="link" onClick={onClose} isDisabled={isBusy}>
          {t('Cancel')}
        </Button>
      </ModalFooter>
    </Modal>
  );
}
