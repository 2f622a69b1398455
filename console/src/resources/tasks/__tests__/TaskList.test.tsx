import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { stubApi } from '../../../test/api';
import { alice, project } from '../../../test/fixtures';
import { inProject } from '../../../test/project';
import { renderWithProviders } from '../../../test/render';
import { HistoryPage } from '../HistoryPage';
import { task } from './fixtures';

function renderHistory(tasks: unknown[]) {
  stubApi({ 'GET /project/1/tasks/last': [200, tasks] });
  return renderWithProviders(inProject(<HistoryPage />, project(1, 'Infra'), alice, 'owner', 15), { path: '/project/1/history' });
}

describe('History (spec §2)', () => {
  it('pages the last tasks at 20 rows', async () => {
    renderHistory(Array.from({ length: 45 }, (_, i) => task(45 - i)));
    await screen.findByRole('button', { name: 'Open the log of task 45' });
    expect(within(screen.getByTestId('task-list')).getAllByRole('row')).toHaveLength(1 + 20);
    fireEvent.click(screen.getAllByRole('button', { name: /next page/i })[0]);
    await screen.findByRole('button', { name: 'Open the log of task 25' });
    fireEvent.click(screen.getAllByRole('button', { name: /next page/i })[0]);
    await screen.findByRole('button', { name: 'Open the log of task 5' });
    expect(within(screen.getByTestId('task-list')).getAllByRole('row')).toHaveLength(1 + 5);
  });

  it('shows the template, the version (a deploy shows its build), status, user and duration', async () => {
    renderHistory([
      task(2, { tpl_alias: 'Deploy app', status: 'error', build_task: task(1, { version: '2.0.1' }) }),
      task(1, { tpl_alias: 'Build app', version: '2.0.1', user_name: undefined, start: null, end: null, status: 'waiting' }),
    ]);
    const rows = (await screen.findAllByRole('row')).slice(1);
    expect(within(rows[0]).getByText('Deploy app')).toBeInTheDocument();
    expect(within(rows[0]).getByText('2.0.1')).toBeInTheDocument();
    expect(within(rows[0]).getByText('Failed')).toBeInTheDocument();
    expect(within(rows[0]).getByText('Administrator')).toBeInTheDocument();
    expect(within(rows[0]).getByText('1 min, 4 sec')).toBeInTheDocument();
    expect(within(rows[1]).getAllByText('—')).toHaveLength(3); // user, start, duration
  });

  it('opens a task log with ?t=', async () => {
    renderHistory([task(3)]);
    fireEvent.click(await screen.findByRole('button', { name: 'Open the log of task 3' }));
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/project/1/history?t=3'));
  });

  it('says so when there are no tasks yet', async () => {
    renderHistory([]);
    expect(await screen.findByText('No tasks yet')).toBeInTheDocument();
  });
});
