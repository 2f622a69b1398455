import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { stubApi } from '../../../test/api';
import { renderWithProviders } from '../../../test/render';
import { task, template } from '../../tasks/__tests__/fixtures';
import type { NewTask } from '../../tasks/useTasks';
import { RunAllDialog } from '../RunAllDialog';
import { asks, splitByQuestions, validateRunAll } from '../runAll';

// A view as the list shows it (the server sorts by name): a plain task, a
// deploy (asks for a build), one with only an optional question (starts as
// it is), one with a required secret question (asks), and a build.
const plain = template(1, { name: 'A lint' });
const deploy = template(2, { name: 'B deploy', type: 'deploy', build_template_id: 5 });
const optional = template(3, {
  name: 'C report',
  survey_vars: [{ name: 'note', title: 'Note', description: '', type: '', required: false }],
});
const secret = template(4, {
  name: 'D rotate',
  survey_vars: [
    { name: 'host', title: 'Host', description: '', type: '', required: true },
    { name: 'db_password', title: 'Database password', description: '', type: 'secret', required: true },
  ],
});
const build = template(6, { name: 'E build', type: 'build' });
const view = [plain, deploy, optional, secret, build];

describe('which templates of a view ask before they start (issue #23 item 3)', () => {
  it('asks for a deploy’s build and for required survey answers only', () => {
    expect(view.map(asks)).toEqual([false, true, false, true, false]);
  });

  it('lists the asking templates first, each part in the view’s order', () => {
    const { asking, direct } = splitByQuestions(view);
    expect(asking.map((t) => t.id)).toEqual([2, 4]);
    expect(direct.map((t) => t.id)).toEqual([1, 3, 6]);
  });

  it('says, per template, what is missing', () => {
    expect(validateRunAll([deploy, secret], { 4: { buildTaskId: '', survey: { host: 'db1' } } })).toEqual({
      2: { buildTaskId: 'Build version is required' },
      4: { 'survey:db_password': 'Database password is required' },
    });
  });
});

/** A server that answers POST /tasks with a new task per template, and refuses template 3. */
function server() {
  let next = 100;
  return stubApi({
    'GET /project/1/templates/5/tasks?status=success': [200, [task(12, { version: '1.0.2' }), task(9, { version: '1.0.1' })]],
    'POST /project/1/tasks': (body) => {
      const request = body as NewTask;
      if (request.template_id === 3) return [400, { error: 'Repository "docs" is not ready' }];
      return [201, task(next++, { template_id: request.template_id, status: 'waiting' })];
    },
  });
}

function renderDialog() {
  let closed = false;
  renderWithProviders(<RunAllDialog projectId={1} viewTitle="Nightly" templates={view} onClose={() => (closed = true)} />, {
    path: '/project/1/views/9/templates',
  });
  return { closed: () => closed };
}

describe('the Run all dialog (issue #23 item 3)', () => {
  it('asks the templates that need answers first and starts nothing until they are given', async () => {
    const api = server();
    renderDialog();
    expect(screen.getByRole('heading', { name: 'Run all in Nightly' })).toBeInTheDocument();
    const headings = screen.getAllByRole('heading', { level: 3 }).map((h) => h.textContent);
    expect(headings).toEqual(['B deploy', 'D rotate', 'Starting as they are']);
    const direct = screen.getByRole('list', { name: 'Starting as they are' });
    expect(within(direct).getAllByRole('listitem').map((li) => li.textContent)).toEqual(['A lint', 'C report', 'E build']);
    // The deploy's newest successful build is selected by default.
    await waitFor(() => expect(screen.getByRole('combobox', { name: 'Build version' })).toHaveValue('12'));

    fireEvent.click(screen.getByRole('button', { name: 'Run all' }));
    expect(await screen.findByText('Host is required')).toBeInTheDocument();
    expect(screen.getByText('Database password is required')).toBeInTheDocument();
    expect(api.writes()).toEqual([]);
  });

  it('starts every template in the view’s order and reports per template, a refusal included', async () => {
    const api = server();
    renderDialog();
    await waitFor(() => expect(screen.getByRole('combobox', { name: 'Build version' })).toHaveValue('12'));
    fireEvent.change(screen.getByLabelText(/^Host/), { target: { value: 'db1' } });
    const password = screen.getByLabelText(/^Database password/);
    expect(password).toHaveAttribute('type', 'password');
    fireEvent.change(password, { target: { value: 's3cr3t-value' } });
    fireEvent.click(screen.getByRole('button', { name: 'Run all' }));

    const results = await screen.findByRole('list', { name: 'Results' });
    await waitFor(() => expect(within(results).getAllByRole('listitem')).toHaveLength(5));
    expect(screen.getByText('4 of 5 started')).toBeInTheDocument();
    expect(within(results).getAllByRole('listitem').map((li) => li.textContent)).toEqual([
      'A lint: Task #100',
      'B deploy: Task #101',
      'C report: Repository "docs" is not ready',
      'D rotate: Task #102',
      'E build: Task #103',
    ]);
    expect(within(results).getByRole('link', { name: 'Task #101' })).toHaveAttribute('href', '/project/1/views/9/templates?t=101');

    const posted = api.writes().map((w) => w.body as NewTask);
    expect(posted.map((b) => b.template_id)).toEqual([1, 2, 3, 4, 6]);
    expect(posted[1]).toMatchObject({ template_id: 2, build_task_id: 12, environment: '{}' });
    // The secret answer goes in `secret`, never in the environment, and is shown nowhere.
    expect(JSON.parse(posted[3].environment)).toEqual({ host: 'db1' });
    expect(JSON.parse(posted[3].secret!)).toEqual({ db_password: 's3cr3t-value' });
    expect(document.body.textContent).not.toContain('s3cr3t-value');
  });

  it('leaves out an asking template the user unticks: not checked, not started, reported as left out', async () => {
    const api = server();
    const dialog = renderDialog();
    fireEvent.click(screen.getByLabelText('Start D rotate'));
    expect(screen.queryByLabelText(/^Host/)).not.toBeInTheDocument();
    await waitFor(() => expect(screen.getByRole('combobox', { name: 'Build version' })).toHaveValue('12'));
    fireEvent.click(screen.getByRole('button', { name: 'Run all' }));

    const results = await screen.findByRole('list', { name: 'Results' });
    await waitFor(() => expect(within(results).getAllByRole('listitem')).toHaveLength(5));
    expect(within(results).getAllByRole('listitem')[3]).toHaveTextContent('D rotate: Left out');
    expect(api.writes().map((w) => (w.body as NewTask).template_id)).toEqual([1, 2, 3, 6]);
    // The footer's Close (the header's × is named Close too), once every template has had its turn.
    const close = screen.getAllByRole('button', { name: 'Close' }).at(-1)!;
    await waitFor(() => expect(close).toBeEnabled());
    fireEvent.click(close);
    expect(dialog.closed()).toBe(true);
  });
});
