import { Bullseye, Spinner } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { taskVersion } from './display';
import { TaskLink, TaskTime } from './TaskCells';
import { TaskStatusLabel } from '../tasks/TaskStatusLabel';
import type { Template } from './types';
import { useLastTasks } from './useTemplates';

/** An expanded row of the template list: the template's last 5 tasks (docs/features.md §2). */
export function LastTasks({ projectId, template }: { projectId: number; template: Template }) {
  const { t } = useTranslation('templates');
  const tasks = useLastTasks(projectId, template.id);
  if (tasks.isPending) {
    return (
      <Bullseye>
        <Spinner size="md" aria-label={t('Loading')} />
      </Bullseye>
    );
  }
  if (tasks.isError) return <p style={{ color: 'var(--pf-t--global--text--color--status--danger--default)' }}>{errorMessage(tasks.error)}</p>;
  if (tasks.data.length === 0) return <p>{t('This template has not run yet.')}</p>;
  return (
    <Table aria-label={t('Last tasks of {{name}}', { name: template.name })} variant="compact" borders={false}>
      <Thead>
        <Tr>
          <Th>{t('Task')}</Th>
          <Th>{t('Status')}</Th>
          <Th>{t('Version')}</Th>
          <Th>{t('User')}</Th>
          <Th>{t('Started')}</Th>
          <Th>{t('Message')}</Th>
        </Tr>
      </Thead>
      <Tbody>
        {tasks.data.map((task) => (
          <Tr key={task.id}>
            <Td dataLabel={t('Task')}>
              <TaskLink taskId={task.id} />
            </Td>
            <Td dataLabel={t('Status')}>
              <span>
                <TaskStatusLabel status={task.status} />
              </span>
            </Td>
            <Td dataLabel={t('Version')}>{taskVersion(task, template.type) ?? '—'}</Td>
            <Td dataLabel={t('User')}>{task.user_name || '—'}</Td>
            <Td dataLabel={t('Started')}>
              <TaskTime task={task} />
            </Td>
            <Td dataLabel={t('Message')}>{task.message || '—'}</Td>
          </Tr>
        ))}
      </Tbody>
    </Table>
  );
}
