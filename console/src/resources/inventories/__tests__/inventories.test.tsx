import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { stubApi } from '../../../test/api';
import { admin, project } from '../../../test/fixtures';
import { inProject } from '../../../test/project';
import { renderWithProviders } from '../../../test/render';
import { InventoriesPage } from '../InventoriesPage';
import { validateInventory, type InventoryFormValues } from '../validation';

const keys = [
  { id: 7, name: 'ssh user', type: 'ssh' },
  { id: 8, name: 'sudo', type: 'login_password' },
];
const inventory = {
  id: 3, name: 'production', project_id: 1, inventory: '[web]\nweb1', ssh_key_id: 7, become_key_id: null, type: 'static', repository_id: null,
};
const lists = {
  'GET /project/1/inventory': [200, [inventory]] as [number, unknown],
  'GET /project/1/keys': [200, keys] as [number, unknown],
  'GET /project/1/repositories': [200, []] as [number, unknown],
};

function renderPage() {
  return renderWithProviders(inProject(<InventoriesPage />, project(1, 'Infra'), admin, 'manager', 5));
}

describe('inventory validation (spec §5)', () => {
  const form = (v: Partial<InventoryFormValues>): InventoryFormValues => ({
    name: 'prod', sshKeyId: '7', becomeKeyId: '', type: 'static', inventory: '', path: '', repositoryId: '', ...v,
  });

  it('requires name, user credentials and type; sudo credentials are optional', () => {
    expect(validateInventory(form({}))).toEqual({});
    expect(validateInventory(form({ name: '', sshKeyId: '', type: '' }))).toEqual({
      name: 'Name is required',
      sshKeyId: 'User credentials is required',
      type: 'Type is required',
    });
  });

  it('requires a path for type file only', () => {
    expect(validateInventory(form({ type: 'file', path: ' ', inventory: '[web]\nweb1' }))).toEqual({ path: 'Path to Inventory file is required' });
    expect(validateInventory(form({ type: 'file', path: 'hosts.ini' }))).toEqual({});
    expect(validateInventory(form({ type: 'static-yaml', inventory: '' }))).toEqual({});
  });
});

describe('the inventory screen', () => {
  it('lists name, type and credentials', async () => {
    stubApi(lists);
    renderPage();
    const row = (await screen.findByText('production')).closest('tr')!;
    expect(within(row).getByText('Static (INI)')).toBeInTheDocument();
    expect(await within(row).findByText('ssh user')).toBeInTheDocument();
  });

  it('asks for the path of a file inventory, then creates it with POST', async () => {
    const api = stubApi({ ...lists, 'POST /project/1/inventory': [201, { ...inventory, id: 4 }] });
    renderPage();
    fireEvent.click(await screen.findByRole('button', { name: 'New Inventory' }));
    const dialog = await screen.findByRole('dialog');
    // Static INI text by default.
    expect(within(dialog).getByLabelText(/^Inventory \(INI\)/)).toBeInTheDocument();
    fireEvent.change(within(dialog).getByRole('combobox', { name: 'Type' }), { target: { value: 'static-yaml' } });
    expect(within(dialog).getByLabelText(/^Inventory \(YAML\)/)).toBeInTheDocument();
    fireEvent.change(within(dialog).getByRole('combobox', { name: 'Type' }), { target: { value: 'file' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create' }));
    expect(within(dialog).getByText('Name is required')).toBeInTheDocument();
    expect(within(dialog).getByText('User credentials is required')).toBeInTheDocument();
    expect(within(dialog).getByText('Path to Inventory file is required')).toBeInTheDocument();
    expect(api.writes()).toEqual([]);
    fireEvent.change(within(dialog).getByRole('textbox', { name: /^Name/ }), { target: { value: 'from repo' } });
    fireEvent.change(within(dialog).getByRole('combobox', { name: 'User Credentials' }), { target: { value: '7' } });
    fireEvent.change(within(dialog).getByRole('combobox', { name: 'Sudo Credentials (optional)' }), { target: { value: '8' } });
    fireEvent.change(within(dialog).getByRole('textbox', { name: /^Path to Inventory file/ }), { target: { value: ' inventories/prod.ini ' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(api.writes()[0]).toEqual({
      method: 'POST',
      path: '/project/1/inventory',
      body: {
        project_id: 1, name: 'from repo', ssh_key_id: 7, become_key_id: 8, type: 'file', inventory: 'inventories/prod.ini', repository_id: null,
      },
    });
  });

  it('edits the INI text with PUT', async () => {
    const api = stubApi({ ...lists, 'PUT /project/1/inventory/3': [204] });
    renderPage();
    fireEvent.click(await screen.findByRole('button', { name: 'Edit production' }));
    const text = await screen.findByLabelText(/^Inventory \(INI\)/);
    expect(text).toHaveValue('[web]\nweb1');
    fireEvent.change(text, { target: { value: '[web]\nweb1\nweb2' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.writes()).toHaveLength(1));
    expect(api.writes()[0]).toMatchObject({ method: 'PUT', body: { id: 3, inventory: '[web]\nweb1\nweb2', become_key_id: null } });
  });
});
