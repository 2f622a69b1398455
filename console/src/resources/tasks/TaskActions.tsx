import { Button } from '@patternfly/react-core';
import DownloadIcon from '@patternfly/react-icons/dist/esm/icons/download-icon';
import { useTranslation } from 'react-i18next';
import { useNotify } from '../../app/Notifications';
import { Permission, useProjectAccess } from '../../app/permissions';
import { awaitingApproval } from '../approvals/status';
import type { Template } from '../templates/types';
import { canConfirm, canStop, isForceStop } from './status';
import { useTaskAction } from './taskAction';
import type { Task } from './types';
import { useConfirmTask, useStopTask } from './useTasks';

interface TaskActionsProps {
  task?: Task;
  template?: Template;
  onRerun(): void;
}

/**
 * The task log's buttons (docs/features.md §4): Confirm while waiting for confirmation
 * (a task waiting for approval has the approval panel's Approve instead);
 * Stop while the task can stop, reading Force Stop (force true) once it is
 * stopping; Re-run with the "Re" prefix; the raw log. The dialog's own close button closes it. Changing a
 * task needs runProjectTasks.
 */
export function TaskActions({ task, template, onRerun }: TaskActionsProps) {
  const { t } = useTranslation('tasks');
  const { project, can } = useProjectAccess();
  const notify = useNotify();
  const taskId = task?.id ?? 0;
  const stop = useStopTask(project.id, taskId);
  const confirm = useConfirmTask(project.id, taskId);
  const action = useTaskAction();
  const run = can(Permission.runProjectTasks);
  const status = task?.status;
  return (
    <>
      {run && status && canConfirm(status) && !awaitingApproval(task) && (
        <Button variant="primary" onClick={() => confirm.mutate(undefined, { onError: notify.error })} isLoading={confirm.isPending} isDisabled={confirm.isPending}>
          {t('Confirm')}
        </Button>
      )}
      {run && status && canStop(status) && (
        <Button
          variant="danger"
          onClick={() => stop.mutate(isForceStop(status), { onError: notify.error })}
          isLoading={stop.isPending}
          isDisabled={stop.isPending}
        >
          {isForceStop(status) ? t('Force Stop') : t('Stop')}
        </Button>
      )}
      {run && task && template && (
        <Button variant="secondary" onClick={onRerun}>
          {action(template.type, true)}
        </Button>
      )}
      {task && (
        <Button
          variant="link"
          icon={<DownloadIcon />}
          component="a"
          href={`/api/project/${project.id}/tasks/${task.id}/raw`}
          download={`task-${task.id}.log`}
        >
          {t('Raw log')}
        </Button>
      )}
    </>
  );
}
