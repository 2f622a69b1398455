import { Alert } from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { LogView } from './LogView';
import { useTaskOutput } from './useTaskOutput';

/** The task's output, live: the log view over the cached TaskOutput. */
export function TaskOutputView({ projectId, taskId }: { projectId: number; taskId: number }) {
  const { t } = useTranslation('tasks');
  const { output, version } = useTaskOutput(projectId, taskId);
  if (output?.state === 'error') {
    return <Alert variant="danger" isInline title={t('The output could not be loaded')}>{errorMessage(output.error)}</Alert>;
  }
  return (
    <LogView
      lines={output?.lines ?? []}
      version={version}
      label={t('Output of task {{id}}', { id: taskId })}
      empty={!output || output.state === 'loading' ? t('Loading output…') : t('No output yet')}
    />
  );
}
