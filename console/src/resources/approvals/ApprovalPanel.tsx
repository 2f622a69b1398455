import { useState } from 'react';
import { ActionGroup, Alert, Button, Form, FormGroup, TextArea } from '@patternfly/react-core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { apiPost } from '../../api/client';
import { useNotify } from '../../app/Notifications';
import { Permission, useProjectAccess } from '../../app/permissions';
import { useSession } from '../../app/SessionContext';
import { taskKeys } from '../tasks/keys';
import type { Task } from '../tasks/types';

/** The server's limit of a rejection's reason. */
const maxReason = 1000;

/**
 * A task that waits for approval, in the task log (loaded only for such a
 * task): "Waiting for approval", and Approve and Reject (with a reason) for
 * those who may decide: updateProject, and not the one who started it (the
 * server's rule; it refuses anyone else).
 */
export function ApprovalPanel({ task }: { task: Task }) {
  const { t } = useTranslation('approvals');
  const { project, can } = useProjectAccess();
  const { user } = useSession();
  const notify = useNotify();
  const queryClient = useQueryClient();
  const [rejecting, setRejecting] = useState(false);
  const [reason, setReason] = useState('');
  const decide = useMutation({
    mutationFn: (body: { verb: 'confirm' | 'reject'; reason?: string }) =>
      apiPost(`/project/${project.id}/tasks/${task.id}/${body.verb}`, body.verb === 'reject' ? { reason: body.reason } : undefined),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: taskKeys.task(project.id, task.id), exact: true }),
    onError: notify.error,
  });
  const own = task.user_id === user.id;
  const mayDecide = can(Permission.updateProject) && !own;
  const tooLong = reason.length > maxReason;

  return (
    <Alert variant="warning" isInline title={t('Waiting for approval')} className="pf-v6-u-my-md" data-testid="approval-panel">
      {!mayDecide && <p>{own ? t('You started this task: another project owner must approve it.') : t('A project owner must approve this task before it runs.')}</p>}
      {mayDecide && !rejecting && (
        <ActionGroup className="pf-v6-u-mt-sm">
          <Button variant="primary" onClick={() => decide.mutate({ verb: 'confirm' })} isLoading={decide.isPending} isDisabled={decide.isPending}>
            {t('Approve')}
          </Button>
          <Button variant="secondary" isDanger onClick={() => setRejecting(true)} isDisabled={decide.isPending}>
            {t('Reject')}
          </Button>
        </ActionGroup>
      )}
      {mayDecide && rejecting && (
        <Form
          onSubmit={(e) => {
            e.preventDefault();
            if (!tooLong) decide.mutate({ verb: 'reject', reason: reason.trim() });
          }}
        >
          <FormGroup label={t('Reason')} fieldId="approval-reason">
            <TextArea id="approval-reason" value={reason} onChange={(_e, v) => setReason(v)} rows={2} validated={tooLong ? 'error' : 'default'} autoFocus />
            {tooLong && <p className="pf-v6-u-danger-color-100">{t('At most {{max}} characters', { max: maxReason })}</p>}
          </FormGroup>
          <ActionGroup>
            <Button type="submit" variant="danger" isLoading={decide.isPending} isDisabled={decide.isPending || tooLong}>
              {t('Reject task')}
            </Button>
            <Button variant="link" onClick={() => setRejecting(false)}>
              {t('Cancel')}
            </Button>
          </ActionGroup>
        </Form>
      )}
    </Alert>
  );
}
