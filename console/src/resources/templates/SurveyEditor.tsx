import { lazy, Suspense, useState } from 'react';
import { Button, FormGroup, Label } from '@patternfly/react-core';
import PencilAltIcon from '@patternfly/react-icons/dist/esm/icons/pencil-alt-icon';
import PlusCircleIcon from '@patternfly/react-icons/dist/esm/icons/plus-circle-icon';
import TrashIcon from '@patternfly/react-icons/dist/esm/icons/trash-icon';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { useTranslation } from 'react-i18next';
import type { SurveyVar } from './types';

// The variable's dialog loads when first opened, not with the editor.
const SurveyVarDialog = lazy(async () => ({ default: (await import('./SurveyVarDialog')).SurveyVarDialog }));

interface SurveyEditorProps {
  value: SurveyVar[];
  onChange(value: SurveyVar[]): void;
  isDisabled?: boolean;
}

/** The template's survey: the variables the new task dialog asks for. */
export function SurveyEditor({ value, onChange, isDisabled }: SurveyEditorProps) {
  const { t } = useTranslation('templates');
  // undefined: closed; -1: adding; else the index being edited.
  const [editing, setEditing] = useState<number | undefined>();
  const save = (variable: SurveyVar) => {
    onChange(editing === -1 || editing === undefined ? [...value, variable] : value.map((v, i) => (i === editing ? variable : v)));
    setEditing(undefined);
  };
  return (
    <FormGroup label={t('Survey variables')} fieldId="survey-add" role="group">
      {value.length > 0 && (
        <Table aria-label={t('Survey variables')} variant="compact" borders={false}>
          <Thead>
            <Tr>
              <Th>{t('Name')}</Th>
              <Th>{t('Title')}</Th>
              <Th>{t('Type')}</Th>
              <Th screenReaderText={t('Actions')} />
            </Tr>
          </Thead>
          <Tbody>
            {value.map((variable, index) => (
              <Tr key={`${variable.name}-${index}`}>
                <Td dataLabel={t('Name')}>
                  <code>{variable.name}</code>
                </Td>
                <Td dataLabel={t('Title')}>
                  {variable.title}{' '}
                  {variable.required && (
                    <Label isCompact color="orange">
                      {t('Required')}
                    </Label>
                  )}
                </Td>
                <Td dataLabel={t('Type')}>{variable.type === 'int' ? t('Integer') : t('String')}</Td>
                <Td isActionCell>
                  <Button variant="plain" icon={<PencilAltIcon />} aria-label={t('Edit variable {{name}}', { name: variable.name })} onClick={() => setEditing(index)} isDisabled={isDisabled} />
                  <Button
                    variant="plain"
                    icon={<TrashIcon />}
                    aria-label={t('Remove variable {{name}}', { name: variable.name })}
                    onClick={() => onChange(value.filter((_, i) => i !== index))}
                    isDisabled={isDisabled}
                  />
                </Td>
              </Tr>
            ))}
          </Tbody>
        </Table>
      )}
      <Button id="survey-add" variant="link" isInline icon={<PlusCircleIcon />} onClick={() => setEditing(-1)} isDisabled={isDisabled}>
        {t('Add variable')}
      </Button>
      {editing !== undefined && (
        <Suspense fallback={null}>
          <SurveyVarDialog variable={editing >= 0 ? value[editing] : undefined} onSave={save} onClose={() => setEditing(undefined)} />
        </Suspense>
      )}
    </FormGroup>
  );
}
