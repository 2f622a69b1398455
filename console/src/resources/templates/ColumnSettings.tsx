import { lazy, Suspense, useState } from 'react';
import { Button } from '@patternfly/react-core';
import ColumnsIcon from '@patternfly/react-icons/dist/esm/icons/columns-icon';
import { useTranslation } from 'react-i18next';
import type { ColumnSettingsDialogProps } from './ColumnSettingsDialog';

// The sheet (a modal with checkboxes) loads when first opened: the list
// shows only its button.
const ColumnSettingsDialog = lazy(async () => ({ default: (await import('./ColumnSettingsDialog')).ColumnSettingsDialog }));

/** The "Columns" button, which opens the column settings sheet. */
export function ColumnSettings(props: Omit<ColumnSettingsDialogProps, 'onClose'>) {
  const { t } = useTranslation('templates');
  const [open, setOpen] = useState(false);
  return (
    <>
      <Button variant="secondary" icon={<ColumnsIcon />} onClick={() => setOpen(true)}>
        {t('Columns')}
      </Button>
      {open && (
        <Suspense fallback={null}>
          <ColumnSettingsDialog {...props} onClose={() => setOpen(false)} />
        </Suspense>
      )}
    </>
  );
}
