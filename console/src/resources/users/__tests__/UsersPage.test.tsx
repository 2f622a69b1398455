import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { stubApi } from '../../../test/api';
import { admin, alice } from '../../../test/fixtures';
import { renderWithProviders } from '../../../test/render';
import { rememberProject } from '../../../settings/settings';
import { UsersPage } from '../UsersPage';

const many = Array.from({ length: 23 }, (_, i) => ({
  ...alice, id: 100 + i, username: `user${String(i).padStart(2, '0')}`, name: `User ${i}`,
}));

describe('the users screen (spec §2)', () => {
  it('shows name, username, email, alert, admin and external, 20 rows a page', async () => {
    stubApi({ 'GET /users': [200, [admin, ...many]] });
    renderWithProviders(<UsersPage />, { path: '/users' });
    const table = await screen.findByRole('grid', { name: 'Users' });
    const headers = within(table).getAllByRole('columnheader').map((h) => h.textContent);
    expect(headers).toEqual(['Name', 'Username', 'Email', 'Alert', 'Admin', 'External', 'Actions']);
    expect(within(table).getAllByRole('row')).toHaveLength(1 + 20);
    fireEvent.click(screen.getAllByRole('button', { name: /next page/i })[0]);
    await waitFor(() => expect(within(table).getAllByRole('row')).toHaveLength(1 + 4));
  });

  it('shows the derived message in place of the table when the list fails', async () => {
    stubApi({ 'GET /users': [500, { error: 'the store is unreachable' }] });
    renderWithProviders(<UsersPage />, { path: '/users' });
    expect(await screen.findByRole('heading', { name: 'The users could not be loaded' })).toBeInTheDocument();
    expect(screen.getByText('the store is unreachable')).toBeInTheDocument();
    expect(screen.queryByRole('grid', { name: 'Users' })).not.toBeInTheDocument();
  });

  it('disables delete on your own row, and asks before deleting another', async () => {
    const api = stubApi({ 'GET /users': [200, [admin, alice]], 'DELETE /users/2': [204] });
    renderWithProviders(<UsersPage />, { path: '/users' });
    fireEvent.click(await screen.findByRole('button', { name: 'Actions for admin' }));
    expect(await screen.findByRole('menuitem', { name: 'Delete' })).toBeDisabled();
    fireEvent.click(screen.getByRole('button', { name: 'Actions for admin' }));
    // The menu leaves the page asynchronously: on a busy machine it was
    // still there when the next one opened, with a second Delete item.
    await waitFor(() => expect(screen.queryByRole('menuitem', { name: 'Delete' })).not.toBeInTheDocument());

    fireEvent.click(screen.getByRole('button', { name: 'Actions for alice' }));
    fireEvent.click(await screen.findByRole('menuitem', { name: 'Delete' }));
    const dialog = await screen.findByRole('dialog');
    expect(dialog).toHaveTextContent('Are you sure you want to delete the user alice?');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    expect(await screen.findByText('User alice deleted')).toBeInTheDocument();
    expect(api.writes()).toEqual([{ method: 'DELETE', path: '/users/2', body: undefined }]);
  });

  it('says who manages a user declared in Git, and offers its password but not its edit or delete (docs/gitops.md)', async () => {
    const flux = { ...alice, managed_by: 'Flux' };
    const api = stubApi({ 'GET /users': [200, [admin, flux]] });
    renderWithProviders(<UsersPage />, { path: '/users' });
    const row = (await screen.findByRole('cell', { name: /Managed by Flux/ })).closest('tr')!;
    expect(row).toHaveTextContent(alice.name);
    fireEvent.click(screen.getByRole('button', { name: `Actions for ${alice.username}` }));
    expect(await screen.findByRole('menuitem', { name: 'Edit' })).toBeDisabled();
    expect(screen.getByRole('menuitem', { name: 'Delete' })).toBeDisabled();
    expect(screen.getByRole('menuitem', { name: 'Change password' })).toBeEnabled();
    expect(api.writes()).toEqual([]);
  });

  it('is only for admins', async () => {
    stubApi({});
    renderWithProviders(<UsersPage />, { path: '/users', user: alice });
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent(/^\/$/));
  });

  it('goes back to the last project remembered on this browser', async () => {
    rememberProject(7);
    stubApi({ 'GET /users': [200, [admin]] });
    renderWithProviders(<UsersPage />, { path: '/users' });
    fireEvent.click(await screen.findByRole('button', { name: 'Back to the project' }));
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent(/^\/project\/7$/));
  });

  it('goes back to / when no project is remembered', async () => {
    stubApi({ 'GET /users': [200, [admin]] });
    renderWithProviders(<UsersPage />, { path: '/users' });
    fireEvent.click(await screen.findByRole('button', { name: 'Back to the project' }));
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent(/^\/$/));
  });
});
