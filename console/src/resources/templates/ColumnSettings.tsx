import { useState } from 'react';
import { Button, Checkbox, Modal, ModalBody, ModalFooter, ModalHeader, Stack } from '@patternfly/react-core';
import ColumnsIcon from '@patternfly/react-icons/dist/esm/icons/columns-icon';
import { useTranslation } from 'react-i18next';
import { fixedColumns } from './columns';

interface ColumnSettingsProps {
  columns: readonly string[];
  /** English titles of the columns. */
  titles: Record<string, string>;
  hidden: string[];
  onChange(hidden: string[]): void;
}

/**
 * The column settings sheet (docs/features.md §2): a checkbox per column; each change
 * applies at once and is kept in the browser by the caller.
 */
export function ColumnSettings({ columns, titles, hidden, onChange }: ColumnSettingsProps) {
  const { t } = useTranslation('templates');
  const [open, setOpen] = useState(false);
  const toggle = (column: string, visible: boolean) =>
    onChange(visible ? hidden.filter((c) => c !== column) : [...hidden, column]);
  return (
    <>
      <Button variant="secondary" icon={<ColumnsIcon />} onClick={() => setOpen(true)}>
        {t('Columns')}
      </Button>
      <Modal variant="small" isOpen={open} onClose={() => setOpen(false)} aria-labelledby="column-settings-title">
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
          <Button variant="primary" onClick={() => setOpen(false)}>
            {t('Done')}
          </Button>
        </ModalFooter>
      </Modal>
    </>
  );
}
