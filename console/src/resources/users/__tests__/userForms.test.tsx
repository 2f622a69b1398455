import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { stubApi } from '../../../test/api';
import { admin, alice } from '../../../test/fixtures';
import { renderWithProviders } from '../../../test/render';
import { ChangePasswordDialog } from '../ChangePasswordDialog';
import { UserDialog } from '../UserDialog';
import { validatePassword, validateUser } from '../validation';

const empty = { name: '', username: '', email: '', password: '', alert: false, admin: false, canCreateProject: false };

describe('user validation (spec §5)', () => {
  it('requires name, username and email, and a password only for a new user', () => {
    expect(validateUser(empty, true)).toEqual({
      name: 'Name is required',
      username: 'Username is required',
      email: 'Email is required',
      password: 'Password is required',
    });
    expect(validateUser(empty, false).password).toBeUndefined();
  });

  it('requires a password to change it', () => {
    expect(validatePassword({ password: '' }).password).toBe('Password is required');
    expect(validatePassword({ password: 'x' }).password).toBeUndefined();
  });
});

describe('the user dialog', () => {
  it('says what is missing, makes no call, then creates the user and names them', async () => {
    const api = stubApi({ 'POST /users': [201, { ...alice, id: 9 }] });
    renderWithProviders(<UserDialog onClose={() => {}} />);
    const dialog = await screen.findByRole('dialog');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create' }));
    for (const message of ['Name is required', 'Username is required', 'Email is required', 'Password is required']) {
      expect(await within(dialog).findByText(message)).toBeInTheDocument();
    }
    expect(api.writes()).toEqual([]);

    fireEvent.change(within(dialog).getByLabelText(/^Name/), { target: { value: 'Alice Liddell' } });
    fireEvent.change(within(dialog).getByLabelText(/^Username/), { target: { value: 'alice' } });
    fireEvent.change(within(dialog).getByLabelText(/^Email/), { target: { value: 'alice@example.com' } });
    fireEvent.change(within(dialog).getByLabelText(/^Password/), { target: { value: 's3cret' } });
    fireEvent.click(within(dialog).getByLabelText('Admin user'));
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create' }));
    expect(await screen.findByText('User alice created')).toBeInTheDocument();
    expect(api.writes()[0]).toEqual({
      method: 'POST',
      path: '/users',
      body: { name: 'Alice Liddell', username: 'alice', email: 'alice@example.com', alert: false, admin: true, can_create_project: false, password: 's3cret' },
    });
  });

  it('edits without a password field and says the user was saved', async () => {
    const api = stubApi({ 'PUT /users/2': [204] });
    renderWithProviders(<UserDialog user={alice} onClose={() => {}} />);
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).queryByLabelText(/^Password/)).not.toBeInTheDocument();
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(await screen.findByText('User alice saved')).toBeInTheDocument();
    expect(api.writes()[0]).toMatchObject({ method: 'PUT', path: '/users/2', body: { id: 2, username: 'alice' } });
  });

  it('disables every input while saving (spec §4)', async () => {
    vi.stubGlobal('fetch', vi.fn(() => new Promise<Response>(() => {})));
    renderWithProviders(<UserDialog user={alice} onClose={() => {}} />);
    const dialog = await screen.findByRole('dialog');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(within(dialog).getByLabelText(/^Name/)).toBeDisabled());
    expect(within(dialog).getByLabelText(/^Email/)).toBeDisabled();
    expect(within(dialog).getByLabelText('Send alerts')).toBeDisabled();
    expect(within(dialog).getByRole('button', { name: 'Cancel' })).toBeDisabled();
  });

  it('disables the fields of an external user', async () => {
    stubApi({});
    renderWithProviders(<UserDialog user={{ ...alice, external: true }} onClose={() => {}} />);
    const dialog = await screen.findByRole('dialog');
    for (const label of [/^Name/, /^Username/, /^Email/]) expect(within(dialog).getByLabelText(label)).toBeDisabled();
  });

  it('shows the admin checkbox only to admins', async () => {
    stubApi({});
    renderWithProviders(<UserDialog user={alice} onClose={() => {}} />, { user: alice });
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).queryByLabelText('Admin user')).not.toBeInTheDocument();
  });

  it('shows a failed save in a red alert inside the dialog, with inputs back on', async () => {
    stubApi({ 'PUT /users/2': [409, { error: 'username alice is taken' }] });
    renderWithProviders(<UserDialog user={alice} onClose={() => {}} />, { user: admin });
    const dialog = await screen.findByRole('dialog');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(await within(dialog).findByTestId('save-error')).toHaveTextContent('username alice is taken');
    expect(within(dialog).getByLabelText(/^Name/)).toBeEnabled();
  });
});

describe('the change password dialog', () => {
  it('requires the password, then posts it', async () => {
    const api = stubApi({ 'POST /users/2/password': [204] });
    renderWithProviders(<ChangePasswordDialog user={alice} onClose={() => {}} />);
    const dialog = await screen.findByRole('dialog');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(await within(dialog).findByText('Password is required')).toBeInTheDocument();
    expect(api.writes()).toEqual([]);
    fireEvent.change(within(dialog).getByLabelText(/New password/), { target: { value: 'n3w' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.writes()).toEqual([{ method: 'POST', path: '/users/2/password', body: { password: 'n3w' } }]));
  });
});
