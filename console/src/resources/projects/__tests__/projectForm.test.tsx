import { fireEvent, screen, waitFor } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { stubApi } from '../../../test/api';
import { alice, project } from '../../../test/fixtures';
import { renderWithProviders } from '../../../test/render';
import { NewProjectPage } from '../NewProjectPage';
import { validateMaxParallelTasks, validateProject } from '../validation';

const values = (name: string, maxParallelTasks = '') => ({ name, alert: false, alertChat: '', maxParallelTasks });

describe('project validation (spec §5)', () => {
  it('requires a name', () => {
    expect(validateProject(values('  ')).name).toBe('Project name is required');
    expect(validateProject(values('Infra')).name).toBeUndefined();
  });

  it('takes max parallel tasks as an optional whole number of at least 0', () => {
    expect(validateMaxParallelTasks('')).toBeUndefined();
    expect(validateMaxParallelTasks('0')).toBeUndefined();
    expect(validateMaxParallelTasks(' 12 ')).toBeUndefined();
    expect(validateMaxParallelTasks('1.5')).toBe('Must be integer');
    expect(validateMaxParallelTasks('ten')).toBe('Must be integer');
    expect(validateMaxParallelTasks('-1')).toBe('Must be 0 or greater');
  });
});

describe('the new project screen (spec §2)', () => {
  it('validates lazily, shows the messages and makes no call', async () => {
    const api = stubApi({});
    renderWithProviders(<NewProjectPage />, { path: '/project/new', user: alice });
    // Nothing is said before the first save.
    expect(screen.queryByText('Project name is required')).not.toBeInTheDocument();
    fireEvent.change(screen.getByLabelText('Max parallel tasks'), { target: { value: '-2' } });
    expect(screen.queryByText('Must be 0 or greater')).not.toBeInTheDocument();

    fireEvent.click(screen.getByRole('button', { name: 'Create' }));
    expect(await screen.findByText('Project name is required')).toBeInTheDocument();
    expect(screen.getByText('Must be 0 or greater')).toBeInTheDocument();
    fireEvent.click(screen.getByRole('button', { name: 'Create Demo Project' }));
    expect(api.writes()).toEqual([]);

    // From then on the messages follow the input.
    fireEvent.change(screen.getByLabelText('Max parallel tasks'), { target: { value: '2.5' } });
    expect(await screen.findByText('Must be integer')).toBeInTheDocument();
  });

  it('says under the alert switches what an alert sends and where', () => {
    stubApi({});
    renderWithProviders(<NewProjectPage />, { path: '/project/new', user: alice });
    expect(screen.getByText(/every team member with “Send alerts” on gets an email/)).toHaveTextContent(
      'the last 20 lines of output and a link to the task',
    );
    expect(screen.getByText(/the same alert without the output also goes to this chat/)).toHaveTextContent('Telegram chat ID');
  });

  it('creates the project, names it in a snackbar and opens it', async () => {
    const api = stubApi({ 'POST /projects': [201, project(7, 'Infra')] });
    renderWithProviders(<NewProjectPage />, { path: '/project/new', user: alice });
    fireEvent.change(screen.getByLabelText(/Project name/), { target: { value: ' Infra ' } });
    fireEvent.change(screen.getByLabelText('Max parallel tasks'), { target: { value: '3' } });
    fireEvent.click(screen.getByRole('button', { name: 'Create' }));
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/project/7/history'));
    expect(await screen.findByText('Project Infra created')).toBeInTheDocument();
    expect(api.writes()).toEqual([
      { method: 'POST', path: '/projects', body: { name: 'Infra', alert: false, alert_chat: null, max_parallel_tasks: 3 } },
    ]);
  });

  it('creates a demo project with the demo flag', async () => {
    const api = stubApi({ 'POST /projects': [201, project(8, 'Demo')] });
    renderWithProviders(<NewProjectPage />, { path: '/project/new', user: alice });
    fireEvent.change(screen.getByLabelText(/Project name/), { target: { value: 'Demo' } });
    fireEvent.click(screen.getByRole('button', { name: 'Create Demo Project' }));
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/project/8/history'));
    expect(api.writes()[0].body).toMatchObject({ name: 'Demo', demo: true });
  });

  it('shows a failed save in a red alert in the form', async () => {
    stubApi({ 'POST /projects': [400, { error: 'max_parallel_tasks is too large' }] });
    renderWithProviders(<NewProjectPage />, { path: '/project/new', user: alice });
    fireEvent.change(screen.getByLabelText(/Project name/), { target: { value: 'Infra' } });
    fireEvent.click(screen.getByRole('button', { name: 'Create' }));
    expect(await screen.findByTestId('save-error')).toHaveTextContent('max_parallel_tasks is too large');
  });

  it('tells a user who may not create projects, and disables the buttons', () => {
    stubApi({});
    renderWithProviders(<NewProjectPage />, { path: '/project/new', user: { ...alice, can_create_project: false } });
    expect(screen.getByText(/You cannot create projects/)).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Create' })).toBeDisabled();
    expect(screen.getByRole('button', { name: 'Create Demo Project' })).toBeDisabled();
  });
});
