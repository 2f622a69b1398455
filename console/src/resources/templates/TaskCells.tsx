// Small pieces the template screens show a task with: a link that opens its
// log (the t query parameter, docs/features.md §2), its status, and when it ran.
import { Label } from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';
import { Link, useLocation } from 'react-router-dom';
import { relativeTime } from '../../app/relativeTime';
import { TaskStatusLabel } from '../tasks/TaskStatusLabel';
import type { Task } from '../tasks/types';
import { NOT_LAUNCHED } from './display';

/** "#12", opening the task's log on the current page. */
export function TaskLink({ taskId, children }: { taskId: number; children?: React.ReactNode }) {
  const { pathname } = useLocation();
  return <Link to={{ pathname, search: `?t=${taskId}` }}>{children ?? `#${taskId}`}</Link>;
}

/** The last task's status, or "Not launched". */
export function LastStatus({ task }: { task: Task | null | undefined }) {
  const { t } = useTranslation('templates');
  // The span keeps the label at its own width where the table stacks its cells.
  return (
    <span>
      {task ? <TaskStatusLabel status={task.status} /> : <Label isCompact variant="outline">{t(NOT_LAUNCHED)}</Label>}
    </span>
  );
}

/** When a task ran (its start, else its creation), relative, with the exact time as a tooltip. */
export function TaskTime({ task }: { task: Task }) {
  const { i18n } = useTranslation();
  const when = task.start ?? task.created;
  if (!when) return <>—</>;
  return (
    <time dateTime={when} title={new Date(when).toLocaleString(i18n.language.replace('_', '-'))}>
      {relativeTime(when, i18n.language)}
    </time>
  );
}
