import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { stubApi } from '../../../test/api';
import { admin, alice, project } from '../../../test/fixtures';
import { inProject } from '../../../test/project';
import { renderWithProviders } from '../../../test/render';
import { TaskLogHost } from '../TaskLogHost';
import type { Task } from '../types';
import { task, template } from './fixtures';

const infra = project(1, 'Infra');

function openLog(shown: Task, { permissions = 15, user = admin, output = [] as unknown[], stderr = [] as number[] } = {}) {
  const api = stubApi({
    [`GET /project/1/tasks/${shown.id}`]: [200, shown],
    [`GET /project/1/tasks/${shown.id}/raw`]: [200],
    [`GET /project/1/tasks/${shown.id}/output?offset=0&limit=10000`]: [200, output],
    [`GET /project/1/tasks/${shown.id}/stderr`]: [200, stderr],
    'GET /project/1/templates/7': [200, template(7, { name: 'Site' })],
    [`POST /project/1/tasks/${shown.id}/stop`]: [204],
    [`POST /project/1/tasks/${shown.id}/confirm`]: [204],
  });
  renderWithProviders(inProject(<TaskLogHost />, infra, user, user.admin ? '' : 'guest', permissions), {
    path: `/project/1/history?t=${shown.id}`,
    user,
  });
  return api;
}

/** The dialog, once its task has loaded. */
async function dialog() {
  const log = await screen.findByRole('dialog');
  await within(log).findByTestId('task-status');
  return log;
}

describe('the task log (spec §2, §4)', () => {
  it('shows the status, author, times, version, commit and the message banner', async () => {
    openLog(
      task(5, {
        status: 'error', message: 'Nightly deploy', version: '1.0.4', commit_hash: '0123456789abcdef0123',
        commit_message: 'Fix the web role', user_name: 'Alice Liddell',
      }),
      { output: [{ task_id: 5, task: '', time: '2026-11-23T10:00:02Z', output: '\x1b[31mfatal: [web1]\x1b[0m' }] },
    );
    const log = await dialog();
    expect(within(log).getByRole('heading', { name: 'Task #5: Deploy web' })).toBeInTheDocument();
    expect(within(log).getByTestId('task-status')).toHaveTextContent('Failed');
    expect(within(log).getByTestId('task-detail-author')).toHaveTextContent('Alice Liddell');
    expect(within(log).getByTestId('task-detail-duration')).toHaveTextContent('1 min, 4 sec');
    expect(within(log).getByTestId('task-detail-version')).toHaveTextContent('1.0.4');
    expect(within(log).getByTestId('task-detail-commit')).toHaveTextContent('0123456789 Fix the web role');
    expect(within(log).getByTestId('task-message')).toHaveTextContent('Nightly deploy');
    expect(await within(log).findByText('fatal: [web1]')).toHaveClass('ansi-fg-1');
    expect(within(log).getByRole('link', { name: 'Raw log' })).toHaveAttribute('href', '/api/project/1/tasks/5/raw');
    expect(within(log).queryByRole('button', { name: /Stop|Confirm/ })).not.toBeInTheDocument();
  });

  it('shows a dash for what a waiting task does not have yet', async () => {
    openLog(task(6, { status: 'waiting', start: null, end: null, user_name: undefined }));
    const log = await dialog();
    for (const id of ['author', 'started', 'ended', 'duration', 'version', 'commit']) {
      expect(within(log).getByTestId(`task-detail-${id}`)).toHaveTextContent('—');
    }
  });

  it('stops a running task without force', async () => {
    const api = openLog(task(5, { status: 'running', end: null }));
    fireEvent.click(within(await dialog()).getByRole('button', { name: 'Stop' }));
    await waitFor(() => expect(api.writes()).toEqual([{ method: 'POST', path: '/project/1/tasks/5/stop', body: { force: false } }]));
  });

  it('offers Force Stop, sending force true, once the task is stopping', async () => {
    const api = openLog(task(5, { status: 'stopping', end: null }));
    fireEvent.click(within(await dialog()).getByRole('button', { name: 'Force Stop' }));
    await waitFor(() => expect(api.writes()).toEqual([{ method: 'POST', path: '/project/1/tasks/5/stop', body: { force: true } }]));
  });

  it('offers Confirm and Stop while waiting for confirmation', async () => {
    const api = openLog(task(5, { status: 'waiting_confirmation', end: null }));
    const log = await dialog();
    expect(within(log).getByRole('button', { name: 'Stop' })).toBeInTheDocument();
    fireEvent.click(within(log).getByRole('button', { name: 'Confirm' }));
    await waitFor(() => expect(api.writes()).toEqual([{ method: 'POST', path: '/project/1/tasks/5/confirm', body: {} }]));
  });

  it('hides Stop, Confirm and Re-run from those who may not run tasks', async () => {
    openLog(task(5, { status: 'waiting_confirmation', end: null }), { permissions: 0, user: alice });
    const log = await dialog();
    expect(within(log).queryByRole('button', { name: /Stop|Confirm|Re-run/ })).not.toBeInTheDocument();
  });

  it('re-runs through the new task dialog titled with the Re prefix', async () => {
    openLog(task(5, { message: 'first' }));
    fireEvent.click(await within(await dialog()).findByRole('button', { name: 'Re-run' }));
    expect(await screen.findByRole('heading', { name: 'Re-run Site' })).toBeInTheDocument();
    expect(screen.getByLabelText('Message')).toHaveValue('first');
  });

  it('closes by removing ?t= from the address', async () => {
    openLog(task(5));
    fireEvent.click(within(await dialog()).getAllByRole('button', { name: 'Close' })[0]);
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent(/^\/project\/1\/history$/));
  });
});

describe('the task log toolbar (issue #23)', () => {
  const line = (output: string, i: number) => ({ task_id: 9, task: '', time: `2026-11-23T10:00:${String(i).padStart(2, '0')}Z`, output });
  const output = [
    'TASK [Deploy] ****',
    '\x1b[32mok: [web1]\x1b[0m deploy',
    'fatal: [web1]: FAILED! => {"msg": "ignored"}',
    '...ignoring',
    'fatal: [web2]: FAILED! => {"msg": "Deploy broke"}',
  ].map(line);

  it('counts matches and steps through them, copies the text, remembers wrap and finds the first failure', async () => {
    window.localStorage.removeItem('logWrap');
    const writeText = vi.fn(async () => {});
    Object.defineProperty(navigator, 'clipboard', { configurable: true, value: { writeText } });
    openLog(task(9, { status: 'error' }), { output });
    const log = await dialog();
    await within(log).findByText('fatal: [web2]: FAILED! => {"msg": "Deploy broke"}', { exact: false });

    fireEvent.change(await within(log).findByTestId('log-find'), { target: { value: 'DEPLOY' } });
    const count = within(log).getByTestId('log-find-count');
    await waitFor(() => expect(count).toHaveTextContent('1 / 3 matches'));
    fireEvent.click(within(log).getByRole('button', { name: 'Previous match' }));
    expect(count).toHaveTextContent('3 / 3 matches');
    expect(log.querySelector('.task-log__match--current')).toHaveTextContent('Deploy');
    fireEvent.click(within(log).getByRole('button', { name: 'Next match' }));
    expect(count).toHaveTextContent('1 / 3 matches');
    fireEvent.click(within(log).getByTestId('log-find-case'));
    await waitFor(() => expect(count).toHaveTextContent('0 matches'));

    fireEvent.click(within(log).getByTestId('log-copy'));
    await waitFor(() => expect(within(log).getByTestId('log-note')).toHaveTextContent('Copied 5 lines'));
    expect(writeText).toHaveBeenCalledWith(
      'TASK [Deploy] ****\nok: [web1] deploy\nfatal: [web1]: FAILED! => {"msg": "ignored"}\n...ignoring\nfatal: [web2]: FAILED! => {"msg": "Deploy broke"}\n',
    );

    fireEvent.click(within(log).getByTestId('log-first-failure'));
    expect(within(log).getByTestId('log-note')).toHaveTextContent('First failure: line 5');

    const wrap = within(log).getByTestId('log-wrap');
    expect(wrap).toHaveAttribute('aria-pressed', 'false');
    fireEvent.click(wrap);
    expect(within(log).getByRole('log')).toHaveAttribute('data-wrap', 'true');
    expect(window.localStorage.getItem('logWrap')).toBe('1');
    fireEvent.click(wrap);
    expect(window.localStorage.getItem('logWrap')).toBeNull();
  });

  it('marks the lines on stderr and, for a program other than ansible, goes to the first of them', async () => {
    const bash: object[] = ['Error: said on stdout', 'working', 'boom', 'done'].map(line);
    bash[2] = { ...bash[2], stream: 'stderr' };
    openLog(task(9, { status: 'error', tpl_app: 'bash' }), { output: bash });
    const log = await dialog();
    const row = (await within(log).findByText('boom')).closest('.task-log__row');
    expect(row).toHaveAttribute('data-stream', 'stderr');
    await waitFor(() => expect(row).toHaveTextContent('Standard error boom'));
    expect(log.querySelectorAll('[data-stream="stderr"]')).toHaveLength(1);

    fireEvent.click(await within(log).findByTestId('log-first-failure'));
    expect(within(log).getByTestId('log-note')).toHaveTextContent('First failure: line 3');
  });

  it('offers no first failure on a task that succeeded', async () => {
    openLog(task(9, { status: 'success', tpl_app: 'bash' }), { output: ['all good', 'a warning'].map(line), stderr: [2] });
    const log = await dialog();
    await within(log).findByTestId('log-copy');
    expect(within(log).queryByTestId('log-first-failure')).toBeNull();
    // The line the stderr list names is marked, though the paged read did not say so.
    await waitFor(() => expect(log.querySelector('[data-line="2"]')).toHaveAttribute('data-stream', 'stderr'));
  });
});
