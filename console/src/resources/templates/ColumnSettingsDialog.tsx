import { Button, Checkbox, Modal, ModalBody, ModalFooter, ModalHeader, Stack } from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';
import { fixedColumns } from './columns';

export interface ColumnSettingsDialogProps {
  columns: readonly string[];
  /** English titles of the columns. */
  titles: Record<string, string>;
  hidden: string[];
  onChange(hidden: string[]): void;
  onClose(): void;
}

/**
 * The column settings sheet (docs/features.md §2): a checkbox per column; each change
 * applies at once and is kept in the browser by the caller.
 */
export function ColumnSettingsDialog({ columns, titles, hidden, onChange, onClose }: ColumnSettingsDialogProps) {
  const { t } = useTranslation('templates');
  const toggle = (column: string, visible: boolean) =>
    onChange(visible ? hidden.filter((c) => c !== column) : [...hidden, column]);
  return (
    <Modal variant="small" isOpen onClose={onClose} aria-labelledby="column-settings-title">
      <ModalHeader title={t('Column settings')} labelId="column-settings-title" />
      <ModalBody>
        <Stack hasGutter>
          {columns.map((column) => (
            <Checkbox
              key={column}
              id={`column-${column}`}
              label={t(titles[column])}
              isChecked={!hidden.includes(column)}
              isDisabled={fixedColumns.includes(column)}
              onChange={(_event, checked) => toggle(column, checked)}
            />
          ))}
        </Stack>
      </ModalBody>
      <ModalFooter>
        <Button variant="primary" onClick={onClose}>
          {t('Done')}
        </Button>
      </ModalFooter>
    </Modal>
  );
}
