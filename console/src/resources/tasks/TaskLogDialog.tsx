import { lazy, Suspense, useState } from 'react';
import {
  Alert,
  Bullseye,
  EmptyState,
  EmptyStateBody,
  Modal,
  ModalBody,
  ModalFooter,
  ModalHeader,
  Spinner,
} from '@patternfly/react-core';
import ExclamationCircleIcon from '@patternfly/react-icons/dist/esm/icons/exclamation-circle-icon';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { awaitingApproval } from '../approvals/status';
import { waitingForApprovalMessage } from '../approvals/types';
import { useProjectAccess } from '../../app/permissions';
import { TaskActions } from './TaskActions';
import { TaskDetails } from './TaskDetails';
import { TaskOutputView } from './TaskOutputView';
import { useTaskTemplate } from './useTemplate';
import { useTask } from './useTasks';

// The approval panel (and its words) loads only for a task that waits for one.
const ApprovalPanel = lazy(async () => ({ default: (await import('../approvals/ApprovalPanel')).ApprovalPanel }));
// Re-run's dialog (a form) loads when asked for, not with every log.
const NewTaskDialog = lazy(async () => ({ default: (await import('./NewTaskDialog')).NewTaskDialog }));

export interface TaskLogDialogProps {
  taskId: number;
  onClose(): void;
}

/**
 * The task log (docs/features.md §2, §4), opened by ?t={taskId}: the task's facts, its
 * message as an info banner, the live output and the actions its status
 * allows. Re-run swaps in the new task dialog, which opens the new task.
 */
export function TaskLogDialog({ taskId, onClose }: TaskLogDialogProps) {
  const { t } = useTranslation('tasks');
  const { project } = useProjectAccess();
  const task = useTask(project.id, taskId);
  const template = useTaskTemplate(project.id, task.data?.template_id);
  const [rerun, setRerun] = useState(false);

  if (rerun && task.data && template.data) {
    return (
      <Suspense fallback={null}>
        <NewTaskDialog template={template.data} rerunOf={task.data} onClose={() => setRerun(false)} />
      </Suspense>
    );
  }
  const name = task.data?.tpl_alias || template.data?.name;
  return (
    <Modal variant="large" isOpen onClose={onClose} aria-labelledby="task-log-title" data-testid="task-log-dialog">
      <ModalHeader
        labelId="task-log-title"
        title={name ? t('Task #{{id}}: {{name}}', { id: taskId, name }) : t('Task #{{id}}', { id: taskId })}
      />
      <ModalBody>
        {task.isPending && (
          <Bullseye className="pf-v6-u-p-lg">
            <Spinner aria-label={t('Loading')} />
          </Bullseye>
        )}
        {task.isError && (
          <EmptyState headingLevel="h2" titleText={t('The task could not be loaded')} icon={ExclamationCircleIcon} status="danger">
            <EmptyStateBody>{errorMessage(task.error)}</EmptyStateBody>
          </EmptyState>
        )}
        {task.data && (
          <>
            <TaskDetails task={task.data} />
            {awaitingApproval(task.data) && (
              <Suspense fallback={null}>
                <ApprovalPanel task={task.data} />
              </Suspense>
            )}
            {task.data.message && !(awaitingApproval(task.data) && task.data.message === waitingForApprovalMessage) && (
              <Alert variant="info" isInline title={task.data.message} className="pf-v6-u-my-md" data-testid="task-message" />
            )}
            <TaskOutputView
              projectId={project.id}
              taskId={taskId}
              app={task.data.tpl_app ?? template.data?.app}
              succeeded={task.data.status === 'success'}
            />
          </>
        )}
      </ModalBody>
      <ModalFooter>
        <TaskActions task={task.data} template={template.data} onRerun={() => setRerun(true)} />
      </ModalFooter>
    </Modal>
  );
}
