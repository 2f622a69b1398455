import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { stubApi } from '../../../test/api';
import { admin, alice, project } from '../../../test/fixtures';
import { inProject } from '../../../test/project';
import { renderWithProviders } from '../../../test/render';
import type { User } from '../../users/types';
import { TaskLogHost } from '../../tasks/TaskLogHost';
import { task, template } from '../../tasks/__tests__/fixtures';
import { emptyTemplateValues, templateRequest } from '../../templates/formValues';

const infra = project(1, 'Infra');
// Started by admin (user 1), waiting for approval.
const waiting = task(5, { status: 'waiting_confirmation', start: null, end: null, message: 'Waiting for approval', approval: { status: 'waiting', message: '' } });

function openLog(user: User, permissions: number, role: string) {
  const api = stubApi({
    'GET /project/1/tasks/5': [200, waiting],
    'GET /project/1/tasks/5/raw': [200],
    'GET /project/1/tasks/5/output?offset=0&limit=10000': [200, []],
    'GET /project/1/templates/7': [200, template(7, { name: 'Site', require_approval: true })],
    'POST /project/1/tasks/5/confirm': [204],
    'POST /project/1/tasks/5/reject': [204],
  });
  renderWithProviders(inProject(<TaskLogHost />, infra, user, role, permissions), { path: '/project/1/history?t=5', user });
  return api;
}

async function panel() {
  const log = await screen.findByRole('dialog');
  return within(log).findByTestId('approval-panel');
}

describe('approvals in the task log', () => {
  it('lets another owner approve, in place of Confirm', async () => {
    const api = openLog(alice, 15, 'owner');
    const box = await panel();
    expect(box).toHaveTextContent('Waiting for approval');
    expect(screen.queryByTestId('task-message')).not.toBeInTheDocument();
    expect(within(screen.getByRole('dialog')).queryByRole('button', { name: 'Confirm' })).not.toBeInTheDocument();
    fireEvent.click(within(box).getByRole('button', { name: 'Approve' }));
    await waitFor(() => expect(api.writes()).toEqual([{ method: 'POST', path: '/project/1/tasks/5/confirm', body: {} }]));
  });

  it('rejects with a reason, refusing one over 1000 characters', async () => {
    const api = openLog(alice, 15, 'owner');
    fireEvent.click(within(await panel()).getByRole('button', { name: 'Reject' }));
    const reason = await screen.findByLabelText('Reason');
    fireEvent.change(reason, { target: { value: 'x'.repeat(1001) } });
    expect(screen.getByText('At most 1000 characters')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Reject task' })).toBeDisabled();
    fireEvent.change(reason, { target: { value: ' change freeze ' } });
    fireEvent.click(screen.getByRole('button', { name: 'Reject task' }));
    await waitFor(() =>
      expect(api.writes()).toEqual([{ method: 'POST', path: '/project/1/tasks/5/reject', body: { reason: 'change freeze' } }]),
    );
  });

  it('offers no decision to the one who started the task, nor to a task runner', async () => {
    openLog(admin, 15, '');
    expect(await panel()).toHaveTextContent('You started this task: another project owner must approve it.');
    expect(screen.queryByRole('button', { name: /Approve|Reject|Confirm/ })).not.toBeInTheDocument();
  });

  it('tells a task runner that an owner must approve', async () => {
    openLog(alice, 1, 'task_runner');
    expect(await panel()).toHaveTextContent('A project owner must approve this task before it runs.');
    expect(screen.queryByRole('button', { name: /Approve|Reject|Confirm/ })).not.toBeInTheDocument();
  });
});

describe('the template editor’s Require approval', () => {
  it('is sent with the template', () => {
    expect(templateRequest({ ...emptyTemplateValues(), requireApproval: true }).require_approval).toBe(true);
    expect(templateRequest(emptyTemplateValues()).require_approval).toBe(false);
  });
});
