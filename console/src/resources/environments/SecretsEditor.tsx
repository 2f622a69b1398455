import { useContext, useRef } from 'react';
import {
  Button,
  Flex,
  FlexItem,
  FormGroup,
  FormSelect,
  FormSelectOption,
  TextInput,
} from '@patternfly/react-core';
import PlusCircleIcon from '@patternfly/react-icons/dist/esm/icons/plus-circle-icon';
import TrashIcon from '@patternfly/react-icons/dist/esm/icons/trash-icon';
import UndoIcon from '@patternfly/react-icons/dist/esm/icons/undo-icon';
import { useTranslation } from 'react-i18next';
import { FieldError, FormDisabledContext } from '../../components/FormFields';
import { secretNameError, type SecretRow } from './secrets';
import type { SecretType } from './types';

interface SecretsEditorProps {
  rows: SecretRow[];
  onChange(rows: SecretRow[]): void;
  /** Whether to show each row's message (after the first save, docs/features.md §5). */
  showErrors: boolean;
}

/**
 * Secret variables: added, renamed, given a new value or deleted; never
 * shown, since the server never sends a value back.
 */
export function SecretsEditor({ rows, onChange, showErrors }: SecretsEditorProps) {
  const { t } = useTranslation('resources');
  const saving = useContext(FormDisabledContext);
  const next = useRef(0);
  const update = (rowKey: string, change: Partial<SecretRow>) =>
    onChange(rows.map((row) => (row.rowKey === rowKey ? { ...row, ...change } : row)));
  const add = () =>
    onChange([...rows, { rowKey: `new-${next.current++}`, type: 'var', name: '', value: '', deleted: false }]);
  const remove = (row: SecretRow) =>
    // A secret added here has nothing stored to delete.
    row.id === undefined ? onChange(rows.filter((r) => r !== row)) : update(row.rowKey, { deleted: true });

  return (
    <FormGroup label={t('Secrets')} role="group" fieldId="environment-secrets">
      {rows.map((row, index) => {
        const label = row.name || t('Secret {{number}}', { number: index + 1 });
        const error = showErrors ? secretNameError(row) : undefined;
        return (
          <div key={row.rowKey} className="pf-v6-u-mb-md" data-testid="secret-row">
            <Flex spaceItems={{ default: 'spaceItemsSm' }} flexWrap={{ default: 'nowrap' }} alignItems={{ default: 'alignItemsFlexStart' }}>
              <FlexItem style={{ minWidth: '6.5rem' }}>
                <FormSelect
                  value={row.type}
                  onChange={(_e, type) => update(row.rowKey, { type: type as SecretType })}
                  // The server cannot move a stored secret to the other type.
                  isDisabled={saving || row.deleted || row.id !== undefined}
                  aria-label={t('Type of {{name}}', { name: label })}
                >
                  <FormSelectOption value="var" label={t('Extra variable')} />
                  <FormSelectOption value="env" label={t('Environment variable')} />
                </FormSelect>
              </FlexItem>
              <FlexItem flex={{ default: 'flex_1' }}>
                <TextInput
                  value={row.name}
                  onChange={(_e, name) => update(row.rowKey, { name })}
                  isDisabled={saving || row.deleted}
                  validated={error ? 'error' : 'default'}
                  placeholder={t('Name')}
                  aria-label={t('Name of {{name}}', { name: label })}
                />
              </FlexItem>
              <FlexItem flex={{ default: 'flex_1' }}>
                <TextInput
                  type="password"
                  value={row.value}
                  onChange={(_e, value) => update(row.rowKey, { value })}
                  isDisabled={saving || row.deleted}
                  placeholder={row.id === undefined ? t('Value') : t('Unchanged')}
                  aria-label={t('Value of {{name}}', { name: label })}
                  autoComplete="new-password"
                />
              </FlexItem>
              <FlexItem>
                {row.deleted ? (
                  <Button variant="plain" icon={<UndoIcon />} isDisabled={saving} aria-label={t('Keep {{name}}', { name: label })} onClick={() => update(row.rowKey, { deleted: false })} />
                ) : (
                  <Button variant="plain" icon={<TrashIcon />} isDisabled={saving} aria-label={t('Delete {{name}}', { name: label })} onClick={() => remove(row)} />
                )}
              </FlexItem>
            </Flex>
            {row.deleted && <small className="pf-v6-u-color-200">{t('Deleted when you save')}</small>}
            <FieldError error={error && t(error)} />
          </div>
        );
      })}
      <Button variant="link" icon={<PlusCircleIcon />} isInline isDisabled={saving} onClick={add}>
        {t('Add Secret')}
      </Button>
    </FormGroup>
  );
}
