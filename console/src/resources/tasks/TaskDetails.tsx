import type { ReactNode } from 'react';
import {
  DescriptionList,
  DescriptionListDescription,
  DescriptionListGroup,
  DescriptionListTerm,
} from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';
import { dateTime, duration, EMPTY } from './dates';
import { isFinished } from './status';
import { TaskStatusLabel } from './TaskStatusLabel';
import type { Task } from './types';
import { useNow } from './useNow';

/** docs/features.md §9: a commit shows as the first 10 characters of its hash. */
export function shortCommit(hash: string | null | undefined): string {
  return hash ? hash.slice(0, 10) : '';
}

/** The facts of a task above its log (docs/features.md §2 task log): status, author, times, version, commit. */
export function TaskDetails({ task }: { task: Task }) {
  const { t, i18n } = useTranslation('tasks');
  const lang = i18n.language;
  const now = useNow(!isFinished(task.status));
  const version = task.version || task.build_task?.version;
  const items: [id: string, term: string, value: ReactNode][] = [
    ['status', t('Status'), <TaskStatusLabel key="status" status={task.status} />],
    ['author', t('Author'), task.user_name || EMPTY],
    ['started', t('Started'), dateTime(task.start, lang)],
    ['ended', t('Ended'), dateTime(task.end, lang)],
    ['duration', t('Duration'), duration(task.start, task.end, lang, now)],
    ['version', t('Version'), version || EMPTY],
    [
      'commit',
      t('Commit'),
      task.commit_hash ? (
        <span key="commit">
          <code title={task.commit_hash}>{shortCommit(task.commit_hash)}</code>
          {task.commit_message && <> {task.commit_message}</>}
        </span>
      ) : (
        EMPTY
      ),
    ],
  ];
  return (
    <DescriptionList isCompact isHorizontal columnModifier={{ default: '1Col', lg: '2Col' }} className="pf-v6-u-mb-md">
      {items.map(([id, term, value]) => (
        <DescriptionListGroup key={term}>
          <DescriptionListTerm>{term}</DescriptionListTerm>
          <DescriptionListDescription data-testid={`task-detail-${id}`}>{value}</DescriptionListDescription>
        </DescriptionListGroup>
      ))}
    </DescriptionList>
  );
}
