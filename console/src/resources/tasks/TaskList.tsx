import { useState } from 'react';
import { Bullseye, Button, EmptyState, EmptyStateBody, Spinner } from '@patternfly/react-core';
import ExclamationCircleIcon from '@patternfly/react-icons/dist/esm/icons/exclamation-circle-icon';
import HistoryIcon from '@patternfly/react-icons/dist/esm/icons/history-icon';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { ago, dateTime, duration, EMPTY } from './dates';
import { isFinished } from './status';
import { Pager, pageWithin } from './Pager';
import { TaskStatusLabel } from './TaskStatusLabel';
import type { Task } from './types';
import { useNow } from './useNow';
import { useOpenTask } from './useOpenTask';
import { useTaskList } from './useTasks';

export interface TaskListProps {
  projectId: number;
  /** Only this template's tasks (template detail); else the project's. */
  templateId?: number;
}

/** Dashboards page at 20 rows (docs/features.md §2, §9). */
export const TASKS_PER_PAGE = 20;

/** The version a task ran: its own (a build's), else the build it deployed. */
function taskVersion(task: Task): string {
  return task.version || task.build_task?.version || EMPTY;
}

/**
 * A table of tasks, newest first, 20 rows per page; the socket keeps it
 * live (api/live.ts). A task's number opens its log (`?t=`).
 */
export function TaskList({ projectId, templateId }: TaskListProps) {
  const { t } = useTranslation('tasks');
  const tasks = useTaskList(projectId, templateId);
  if (tasks.isPending) {
    return (
      <Bullseye className="pf-v6-u-p-lg">
        <Spinner aria-label={t('Loading')} />
      </Bullseye>
    );
  }
  if (tasks.isError) {
    return (
      <EmptyState headingLevel="h2" titleText={t('The tasks could not be loaded')} icon={ExclamationCircleIcon} status="danger">
        <EmptyStateBody>{errorMessage(tasks.error)}</EmptyStateBody>
      </EmptyState>
    );
  }
  if (tasks.data.length === 0) {
    return (
      <EmptyState headingLevel="h2" titleText={t('No tasks yet')} icon={HistoryIcon}>
        <EmptyStateBody>
          {templateId ? t('Run this template and its tasks appear here.') : t('Run a template and its tasks appear here.')}
        </EmptyStateBody>
      </EmptyState>
    );
  }
  return <TaskTable tasks={tasks.data} showTemplate={!templateId} />;
}

function TaskTable({ tasks, showTemplate }: { tasks: Task[]; showTemplate: boolean }) {
  const { t, i18n } = useTranslation('tasks');
  const openTask = useOpenTask();
  const [page, setPage] = useState(1);
  const current = pageWithin(page, tasks.length, TASKS_PER_PAGE);
  const rows = tasks.slice((current - 1) * TASKS_PER_PAGE, current * TASKS_PER_PAGE);
  const now = useNow(rows.some((task) => !isFinished(task.status)));
  const lang = i18n.language;

  return (
    <>
      <Pager total={tasks.length} perPage={TASKS_PER_PAGE} page={current} onPage={setPage} label={t('Task pages')} />
      <Table aria-label={t('Tasks')} variant="compact" data-testid="task-list">
        <Thead>
          <Tr>
            <Th modifier="wrap">{t('Task')}</Th>
            {showTemplate && <Th modifier="wrap">{t('Template')}</Th>}
            <Th modifier="wrap">{t('Version')}</Th>
            <Th modifier="wrap">{t('Status')}</Th>
            <Th modifier="wrap">{t('User')}</Th>
            <Th modifier="wrap">{t('Start')}</Th>
            <Th modifier="wrap">{t('Duration')}</Th>
          </Tr>
        </Thead>
        <Tbody>
          {rows.map((task) => (
            <Tr key={task.id} isClickable onRowClick={() => openTask(task.id)}>
              <Td dataLabel={t('Task')}>
                <Button
                  variant="link"
                  isInline
                  onClick={(event) => {
                    event.stopPropagation();
                    openTask(task.id);
                  }}
                  aria-label={t('Open the log of task {{id}}', { id: task.id })}
                >
                  #{task.id}
                </Button>
                {task.message && <div className="pf-v6-u-font-size-sm pf-v6-u-color-200">{task.message}</div>}
              </Td>
              {showTemplate && <Td dataLabel={t('Template')}>{task.tpl_alias || EMPTY}</Td>}
              <Td dataLabel={t('Version')}>{taskVersion(task)}</Td>
              <Td dataLabel={t('Status')}>
                <TaskStatusLabel status={task.status} />
              </Td>
              <Td dataLabel={t('User')}>{task.user_name || EMPTY}</Td>
              <Td dataLabel={t('Start')}>
                {task.start ? (
                  <time dateTime={task.start} title={dateTime(task.start, lang)}>
                    {ago(task.start, lang, now)}
                  </time>
                ) : (
                  EMPTY
                )}
              </Td>
              <Td dataLabel={t('Duration')}>{duration(task.start, task.end, lang, now)}</Td>
            </Tr>
          ))}
        </Tbody>
      </Table>
    </>
  );
}
