import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { stubApi } from '../../../test/api';
import { admin, alice, project } from '../../../test/fixtures';
import { inProject } from '../../../test/project';
import { renderWithProviders } from '../../../test/render';
import { TeamPage } from '../TeamPage';
import { validateMember } from '../validation';

const infra = project(1, 'Infra');
const team = [
  { id: 3, username: 'zed', name: 'Zed Zulu', role: 'guest' },
  { id: 2, username: 'alice', name: 'Alice Liddell', role: 'owner' },
];
const everyone = [
  { id: 1, username: 'admin', name: 'Administrator' },
  { id: 2, username: 'alice', name: 'Alice Liddell' },
  { id: 3, username: 'zed', name: 'Zed Zulu' },
  { id: 4, username: 'bob', name: 'Bob Builder' },
];

function renderTeam(role: string, permissions: number, user = alice) {
  return renderWithProviders(inProject(<TeamPage />, infra, user, role, permissions), { path: '/project/1/team', user });
}

describe('team member validation (spec §5)', () => {
  it('requires a user and a role, both with the user message', () => {
    expect(validateMember({ userId: '', role: '' })).toEqual({ userId: 'User is required', role: 'User is required' });
  });
});

describe('the team screen (spec §2)', () => {
  it('lists members by name with a role dropdown for those who manage the team', async () => {
    stubApi({ 'GET /project/1/users?sort=name&order=asc': [200, team] });
    renderTeam('owner', 15);
    const rows = await screen.findAllByRole('row');
    expect(rows.slice(1).map((row) => within(row).getAllByRole('cell')[0].textContent)).toEqual(['Alice Liddell', 'Zed Zulu']);
    expect(screen.getByRole('combobox', { name: 'Role of zed' })).toHaveValue('guest');
    expect(screen.getByRole('button', { name: 'New Team Member' })).toBeInTheDocument();
    // The owner cannot leave.
    expect(screen.getByRole('button', { name: 'Leave Project' })).toBeDisabled();
  });

  it('offers exactly Owner, Manager, Task Runner and Guest in the role dropdown', async () => {
    stubApi({ 'GET /project/1/users?sort=name&order=asc': [200, team] });
    renderTeam('owner', 15);
    const select = await screen.findByRole('combobox', { name: 'Role of zed' });
    const options = within(select).getAllByRole('option');
    expect(options.map((o) => o.textContent)).toEqual(['Owner', 'Manager', 'Task Runner', 'Guest']);
  });

  it('shows the derived message in place of the table when the list fails', async () => {
    stubApi({ 'GET /project/1/users?sort=name&order=asc': [500, { error: 'the cluster is unreachable' }] });
    renderTeam('owner', 15);
    expect(await screen.findByRole('heading', { name: 'The team could not be loaded' })).toBeInTheDocument();
    expect(screen.getByText('the cluster is unreachable')).toBeInTheDocument();
    expect(screen.queryByRole('grid', { name: 'Team' })).not.toBeInTheDocument();
  });

  it('shows all 25 members of a big team, with no pager', async () => {
    const big = Array.from({ length: 25 }, (_, i) => ({
      id: 100 + i, username: `user${String(i).padStart(2, '0')}`, name: `User ${String(i).padStart(2, '0')}`, role: 'guest',
    }));
    stubApi({ 'GET /project/1/users?sort=name&order=asc': [200, big] });
    renderTeam('owner', 15);
    await screen.findByText('User 24');
    expect(screen.getAllByRole('row')).toHaveLength(1 + 25);
    expect(screen.queryByRole('button', { name: /next page/i })).not.toBeInTheDocument();
    expect(document.querySelector('.pf-v6-c-pagination')).toBeNull();
  });

  it('shows role titles as text, and no write buttons, to others', async () => {
    stubApi({ 'GET /project/1/users?sort=name&order=asc': [200, team] });
    renderTeam('guest', 0, { ...alice, id: 3 });
    expect(await screen.findByText('Guest')).toBeInTheDocument();
    expect(screen.queryByRole('combobox')).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'New Team Member' })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /Remove/ })).not.toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Leave Project' })).toBeEnabled();
  });

  it('saves a role change at once', async () => {
    const api = stubApi({
      'GET /project/1/users?sort=name&order=asc': [200, team],
      'PUT /project/1/users/3': [204],
      'GET /project/1/role': [200, { role: 'owner', permissions: 15 }],
    });
    renderTeam('owner', 15);
    fireEvent.change(await screen.findByRole('combobox', { name: 'Role of zed' }), { target: { value: 'manager' } });
    await waitFor(() =>
      expect(api.writes()).toEqual([
        { method: 'PUT', path: '/project/1/users/3', body: { id: 3, username: 'zed', name: 'Zed Zulu', role: 'manager' } },
      ]),
    );
  });

  it('links a user who is not a member, with a dialog whose button is Link', async () => {
    const api = stubApi({
      'GET /project/1/users?sort=name&order=asc': [200, team],
      'GET /users': [200, everyone],
      'POST /project/1/users': [204],
      'GET /project/1/role': [200, { role: 'owner', permissions: 15 }],
    });
    renderTeam('owner', 15, admin);
    fireEvent.click(await screen.findByRole('button', { name: 'New Team Member' }));
    const dialog = await screen.findByRole('dialog');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Link' }));
    expect(await within(dialog).findAllByText('User is required')).toHaveLength(2);
    expect(api.writes()).toEqual([]);

    const users = within(dialog).getByRole('combobox', { name: 'User' });
    await waitFor(() => expect(within(users).getAllByRole('option')).toHaveLength(3));
    expect(within(users).getAllByRole('option').map((o) => o.textContent)).toEqual([
      'Select a user',
      'admin (Administrator)',
      'bob (Bob Builder)',
    ]);
    fireEvent.change(users, { target: { value: '4' } });
    fireEvent.change(within(dialog).getByRole('combobox', { name: 'Role' }), { target: { value: 'task_runner' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Link' }));
    await waitFor(() => expect(api.writes()).toEqual([{ method: 'POST', path: '/project/1/users', body: { user_id: 4, role: 'task_runner' } }]));
  });

  it('asks before removing a member', async () => {
    const api = stubApi({
      'GET /project/1/users?sort=name&order=asc': [200, team],
      'DELETE /project/1/users/3': [204],
      'GET /project/1/role': [200, { role: 'owner', permissions: 15 }],
    });
    renderTeam('owner', 15);
    fireEvent.click(await screen.findByRole('button', { name: 'Remove zed' }));
    const dialog = await screen.findByRole('dialog');
    expect(dialog).toHaveTextContent('Are you sure you want to remove zed from the team?');
    expect(api.writes()).toEqual([]);
    fireEvent.click(within(dialog).getByRole('button', { name: 'Remove' }));
    await waitFor(() => expect(api.writes()).toEqual([{ method: 'DELETE', path: '/project/1/users/3', body: undefined }]));
  });

  it('leaves the project after asking, and reloads the page', async () => {
    const api = stubApi({ 'GET /project/1/users?sort=name&order=asc': [200, team], 'DELETE /project/1/me': [204] });
    const assign = vi.fn();
    vi.stubGlobal('location', { ...window.location, assign });
    renderTeam('guest', 0, { ...alice, id: 3 });
    fireEvent.click(await screen.findByRole('button', { name: 'Leave Project' }));
    const dialog = await screen.findByRole('dialog');
    expect(dialog).toHaveTextContent('Are you sure you want to leave the project Infra?');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Leave' }));
    await waitFor(() => expect(assign).toHaveBeenCalledWith('/'));
    expect(api.writes()).toEqual([{ method: 'DELETE', path: '/project/1/me', body: undefined }]);
  });
});
