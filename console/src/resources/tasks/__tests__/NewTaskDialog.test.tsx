import { fireEvent, screen, waitFor } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { stubApi } from '../../../test/api';
import { renderWithProviders } from '../../../test/render';
import { NewTaskDialog } from '../NewTaskDialog';
import { validateNewTask, type NewTaskValues } from '../validation';
import { task, template } from './fixtures';

const empty: NewTaskValues = {
  buildTaskId: '', survey: {}, message: '', debug: false, dryRun: false, diff: false, arguments: '', branch: '',
};
const surveyed = template(7, {
  name: 'Deploy web',
  survey_vars: [
    { name: 'target', title: 'Target host', description: '', type: '', required: true },
    { name: 'count', title: 'Count', description: 'How many', type: 'int', required: false },
  ],
});
const deploy = template(8, { name: 'Deploy app', type: 'deploy', build_template_id: 5 });

describe('new task validation (spec §5)', () => {
  it('requires a build version for a deploy', () => {
    expect(validateNewTask(empty, deploy)).toEqual({ buildTaskId: 'Build version is required' });
    expect(validateNewTask({ ...empty, buildTaskId: '3' }, deploy)).toEqual({});
  });

  it('says "<title> is required" for an empty required survey variable', () => {
    expect(validateNewTask(empty, surveyed)).toEqual({ 'survey:target': 'Target host is required' });
    expect(validateNewTask({ ...empty, survey: { target: '   ' } }, surveyed)).toEqual({ 'survey:target': 'Target host is required' });
  });

  it('accepts digits only in an int variable', () => {
    const filled = (count: string) => ({ ...empty, survey: { target: 'web1', count } });
    expect(validateNewTask(filled('12'), surveyed)).toEqual({});
    for (const bad of ['1.5', '-3', '12a', '1e3']) {
      expect(validateNewTask(filled(bad), surveyed)).toEqual({ 'survey:count': 'Must be integer' });
    }
  });

  it('checks arguments only when the template allows override', () => {
    const values = { ...empty, arguments: 'not json' };
    expect(validateNewTask(values, template(1))).toEqual({});
    expect(validateNewTask(values, template(1, { allow_override_args_in_task: true }))).toEqual({
      arguments: 'Arguments must be a JSON array',
    });
  });
});

describe('the new task dialog (spec §4)', () => {
  it('shows the messages and makes no call until the form is valid', async () => {
    const api = stubApi({});
    renderWithProviders(<NewTaskDialog template={surveyed} onClose={() => {}} />, { path: '/project/1/templates' });
    expect(screen.getByRole('heading', { name: 'Run Deploy web' })).toBeInTheDocument();
    fireEvent.change(screen.getByLabelText(/^Count/), { target: { value: 'ten' } });
    fireEvent.click(screen.getByRole('button', { name: 'Run' }));
    expect(await screen.findByText('Target host is required')).toBeInTheDocument();
    expect(screen.getByText('Must be integer')).toBeInTheDocument();
    expect(api.writes()).toEqual([]);
  });

  it('hides arguments unless the template allows override', () => {
    stubApi({});
    const { unmount } = renderWithProviders(<NewTaskDialog template={template(1)} onClose={() => {}} />);
    expect(screen.queryByLabelText('Arguments')).not.toBeInTheDocument();
    unmount();
    renderWithProviders(<NewTaskDialog template={template(1, { allow_override_args_in_task: true })} onClose={() => {}} />);
    expect(screen.getByLabelText('Arguments')).toBeInTheDocument();
  });

  it('offers the successful builds of the build template, the newest selected, and opens the new task log', async () => {
    const api = stubApi({
      'GET /project/1/templates/5/tasks?status=success': [200, [task(12, { version: '1.0.2' }), task(9, { version: '1.0.1' })]],
      'POST /project/1/tasks': [201, task(13, { status: 'waiting' })],
    });
    let closed = false;
    renderWithProviders(<NewTaskDialog template={deploy} onClose={() => (closed = true)} />, { path: '/project/1/templates' });
    expect(screen.getByRole('heading', { name: 'Deploy Deploy app' })).toBeInTheDocument();
    await waitFor(() => expect(screen.getByRole('combobox', { name: 'Build version' })).toHaveValue('12'));
    fireEvent.change(screen.getByLabelText('Message'), { target: { value: 'hotfix' } });
    fireEvent.click(screen.getByLabelText('Dry run'));
    fireEvent.click(screen.getByRole('button', { name: 'Deploy' }));
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/project/1/templates?t=13'));
    expect(closed).toBe(true);
    expect(api.writes()).toEqual([
      {
        method: 'POST',
        path: '/project/1/tasks',
        body: { template_id: 8, build_task_id: 12, message: 'hotfix', environment: '{}', debug: false, dry_run: true, diff: false },
      },
    ]);
  });

  it('sends the answer to a secret survey variable as `secret`, never in the environment, from a password field', async () => {
    const api = stubApi({ 'POST /project/1/tasks': [201, task(14, { status: 'waiting' })] });
    const withSecret = template(9, {
      name: 'Rotate',
      survey_vars: [
        { name: 'host', title: 'Host', description: '', type: '', required: true },
        { name: 'db_password', title: 'Database password', description: '', type: 'secret', required: true },
      ],
    });
    renderWithProviders(<NewTaskDialog template={withSecret} onClose={() => {}} />, { path: '/project/1/templates' });
    const password = screen.getByLabelText(/^Database password/);
    expect(password).toHaveAttribute('type', 'password');
    fireEvent.click(screen.getByRole('button', { name: 'Run' }));
    expect(await screen.findByText('Database password is required')).toBeInTheDocument();
    fireEvent.change(screen.getByLabelText(/^Host/), { target: { value: 'db1' } });
    fireEvent.change(password, { target: { value: 's3cr3t-value' } });
    fireEvent.click(screen.getByRole('button', { name: 'Run' }));
    await waitFor(() => expect(api.writes()).toHaveLength(1));
    const body = api.writes()[0].body as { environment: string; secret: string };
    expect(JSON.parse(body.environment)).toEqual({ host: 'db1' });
    expect(JSON.parse(body.secret)).toEqual({ db_password: 's3cr3t-value' });
  });

  it('says Build version is required when the build template has no successful build', async () => {
    const api = stubApi({ 'GET /project/1/templates/5/tasks?status=success': [200, []] });
    renderWithProviders(<NewTaskDialog template={deploy} onClose={() => {}} />);
    await screen.findByText('No successful builds');
    fireEvent.click(screen.getByRole('button', { name: 'Deploy' }));
    expect(await screen.findByText('Build version is required')).toBeInTheDocument();
    expect(api.writes()).toEqual([]);
  });

  it('titles a re-run with the "Re" prefix and fills the form from the task', () => {
    stubApi({});
    const previous = task(4, { message: 'again', debug: true, environment: '{"target":"web2"}', git_branch: 'dev' });
    const branchable = { ...surveyed, allow_override_branch_in_task: true };
    renderWithProviders(<NewTaskDialog template={branchable} rerunOf={previous} onClose={() => {}} />);
    expect(screen.getByRole('heading', { name: 'Re-run Deploy web' })).toBeInTheDocument();
    expect(screen.getByLabelText(/^Target host/)).toHaveValue('web2');
    expect(screen.getByLabelText('Message')).toHaveValue('again');
    expect(screen.getByLabelText('Branch')).toHaveValue('dev');
    expect(screen.getByLabelText('Debug')).toBeChecked();
  });

  it('offers and sends a branch only when the template allows a task to choose it', async () => {
    const api = stubApi({ 'POST /project/1/tasks': [201, task(9)] });
    const previous = task(4, { environment: '{"target":"web2"}', git_branch: 'attacker' });
    renderWithProviders(<NewTaskDialog template={surveyed} rerunOf={previous} onClose={() => {}} />);
    expect(screen.queryByLabelText('Branch')).not.toBeInTheDocument();
    fireEvent.click(screen.getByRole('button', { name: 'Re-run' }));
    await waitFor(() => expect(api.writes()).toHaveLength(1));
    expect(api.writes()[0].body).not.toHaveProperty('git_branch');
  });

  it('shows the server error in the form', async () => {
    stubApi({ 'POST /project/1/tasks': [400, { error: 'Target host is required' }] });
    renderWithProviders(<NewTaskDialog template={template(1)} onClose={() => {}} />);
    fireEvent.click(screen.getByRole('button', { name: 'Run' }));
    expect(await screen.findByTestId('save-error')).toHaveTextContent('Target host is required');
  });
});
