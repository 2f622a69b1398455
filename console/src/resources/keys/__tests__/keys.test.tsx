import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { stubApi } from '../../../test/api';
import { admin, alice, project } from '../../../test/fixtures';
import { inProject } from '../../../test/project';
import { renderWithProviders } from '../../../test/render';
import { KeysPage } from '../KeysPage';
import { validateKey, type KeyFormValues } from '../validation';

const infra = project(1, 'Infra');
const empty = { login: '', password: '', passphrase: '', privateKey: '' };
const stored = {
  id: 7, name: 'deploy key', type: 'ssh', project_id: 1, override_secret: false, empty: false,
  ssh: { login: '', passphrase: '', private_key: '' }, login_password: { login: '', password: '' },
};

function renderPage(permissions = 5, user = admin) {
  return renderWithProviders(inProject(<KeysPage />, infra, user, permissions ? 'manager' : 'guest', permissions), { user });
}

describe('key validation (spec §5)', () => {
  const form = (v: Partial<KeyFormValues>): KeyFormValues => ({ name: 'k', type: 'none', secretEditable: true, ...empty, ...v });

  it('requires a name', () => {
    expect(validateKey(form({ name: '  ' }))).toEqual({ name: 'Name is required' });
  });

  it('requires a type when secrets are editable', () => {
    expect(validateKey(form({ type: '' }))).toEqual({ type: 'Type is required' });
  });

  it('requires a password for login_password and a private key for ssh', () => {
    expect(validateKey(form({ type: 'login_password' }))).toEqual({ password: 'Password is required' });
    expect(validateKey(form({ type: 'ssh', privateKey: ' \n' }))).toEqual({ privateKey: 'Private key is required' });
    expect(validateKey(form({ type: 'ssh', privateKey: '-----BEGIN OPENSSH PRIVATE KEY-----' }))).toEqual({});
    expect(validateKey(form({ type: 'none' }))).toEqual({});
  });

  it('checks no secret while the secret is locked', () => {
    expect(validateKey(form({ type: 'ssh', secretEditable: false }))).toEqual({});
  });
});

describe('the key store', () => {
  it('lists names and types, with write buttons only for managers', async () => {
    stubApi({ 'GET /project/1/keys': [200, [stored]] });
    renderPage(0, alice);
    const row = (await screen.findByText('deploy key')).closest('tr')!;
    expect(within(row).getByText('SSH Key')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'New Key' })).not.toBeInTheDocument();
    expect(within(row).queryByRole('button')).not.toBeInTheDocument();
  });

  it('creates a login_password key after the password message, with POST', async () => {
    const api = stubApi({ 'GET /project/1/keys': [200, []], 'POST /project/1/keys': [204] });
    renderPage();
    expect(await screen.findByText('No keys yet')).toBeInTheDocument();
    fireEvent.click(screen.getByRole('button', { name: 'New Key' }));
    const dialog = await screen.findByRole('dialog');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create' }));
    expect(within(dialog).getByText('Name is required')).toBeInTheDocument();
    expect(within(dialog).getByText('Type is required')).toBeInTheDocument();
    fireEvent.change(within(dialog).getByRole('textbox', { name: /^Name/ }), { target: { value: 'vault' } });
    fireEvent.change(within(dialog).getByRole('combobox', { name: 'Type' }), { target: { value: 'login_password' } });
    expect(within(dialog).getByText('Password is required')).toBeInTheDocument();
    expect(api.writes()).toEqual([]);
    fireEvent.change(within(dialog).getByLabelText(/^Login/), { target: { value: 'deployer' } });
    fireEvent.change(within(dialog).getByLabelText(/^Password/), { target: { value: 's3cret' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(api.writes()).toEqual([
      {
        method: 'POST',
        path: '/project/1/keys',
        body: {
          project_id: 1, name: 'vault', type: 'login_password', override_secret: false,
          ssh: { login: 'deployer', passphrase: '', private_key: '' },
          login_password: { login: 'deployer', password: 's3cret' },
        },
      },
    ]);
  });

  it('locks type and secret of an existing key until "Override secret" is checked', async () => {
    const api = stubApi({ 'GET /project/1/keys': [200, [stored]], 'PUT /project/1/keys/7': [204] });
    renderPage();
    fireEvent.click(await screen.findByRole('button', { name: 'Edit deploy key' }));
    const dialog = await screen.findByRole('dialog');
    const privateKey = within(dialog).getByLabelText(/^Private Key/);
    expect(privateKey).toHaveValue('');
    expect(privateKey).toBeDisabled();
    expect(within(dialog).getByRole('combobox', { name: 'Type' })).toBeDisabled();

    // A rename alone keeps the stored secret.
    fireEvent.change(within(dialog).getByRole('textbox', { name: /^Name/ }), { target: { value: 'deploy key 2' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.writes()).toHaveLength(1));
    expect(api.writes()[0]).toMatchObject({ method: 'PUT', path: '/project/1/keys/7', body: { id: 7, name: 'deploy key 2', override_secret: false } });
  });

  it('sends a new secret with override_secret once the box is checked, and asks for it first', async () => {
    const api = stubApi({ 'GET /project/1/keys': [200, [stored]], 'PUT /project/1/keys/7': [204] });
    renderPage();
    fireEvent.click(await screen.findByRole('button', { name: 'Edit deploy key' }));
    const dialog = await screen.findByRole('dialog');
    fireEvent.click(within(dialog).getByRole('checkbox', { name: 'Override secret' }));
    const privateKey = within(dialog).getByLabelText(/^Private Key/);
    expect(privateKey).toBeEnabled();
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(within(dialog).getByText('Private key is required')).toBeInTheDocument();
    expect(api.writes()).toEqual([]);
    fireEvent.change(privateKey, { target: { value: '-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.writes()).toHaveLength(1));
    expect(api.writes()[0].body).toMatchObject({ override_secret: true, type: 'ssh', ssh: { private_key: expect.stringContaining('abc') } });
  });
});
