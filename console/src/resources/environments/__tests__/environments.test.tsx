import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { stubApi } from '../../../test/api';
import { admin, project } from '../../../test/fixtures';
import { inProject } from '../../../test/project';
import { renderWithProviders } from '../../../test/render';
import { EnvironmentsPage } from '../EnvironmentsPage';
import { rowsOf, secretNameError, secretOperations } from '../secrets';
import { isJsonObject, validateEnvironment } from '../validation';

const stored = {
  id: 2, name: 'production', project_id: 1, password: '', json: '{"region":"eu"}', env: '{}',
  secrets: [
    { id: 11, type: 'var', name: 'db_password', secret: '' },
    { id: 12, type: 'env', name: 'API_TOKEN', secret: '' },
  ],
};

function renderPage() {
  return renderWithProviders(inProject(<EnvironmentsPage />, project(1, 'Infra'), admin, 'manager', 5));
}

describe('environment validation (spec §5)', () => {
  it('requires a name', () => {
    expect(validateEnvironment({ name: '', json: '{}', env: '{}', secrets: [] })).toEqual({ name: 'Name is required' });
  });

  it('says the variables must be valid JSON, for either field', () => {
    const message = 'Environment and extra variables must be valid JSON';
    expect(validateEnvironment({ name: 'e', json: '{"a":', env: '{}', secrets: [] })).toEqual({ json: message });
    expect(validateEnvironment({ name: 'e', json: '{}', env: '[1]', secrets: [] })).toEqual({ env: message });
  });

  it('takes JSON objects, and empty text as {}', () => {
    expect(isJsonObject('{"a": {"b": [1]}}')).toBe(true);
    expect(isJsonObject('')).toBe(true);
    for (const bad of ['null', '"text"', '42', '[]', '{a: 1}']) expect(isJsonObject(bad), bad).toBe(false);
  });

  it('requires a usable name for each secret', () => {
    const row = { rowKey: 'n', type: 'var' as const, name: '', value: 'x', deleted: false };
    expect(secretNameError(row)).toBe('Name is required');
    expect(secretNameError({ ...row, name: 'has space' })).toBe('Use only letters, digits, "-", "." and "_"');
    expect(secretNameError({ ...row, name: 'db.pass-1_x' })).toBeUndefined();
    expect(secretNameError({ ...row, deleted: true })).toBeUndefined();
  });
});

describe('secret operations', () => {
  it('send only what was added, changed or deleted, never a value read back', () => {
    const rows = rowsOf(stored.secrets as never);
    expect(rows.every((r) => r.value === '')).toBe(true);
    expect(secretOperations(rows)).toEqual([]);
    const edited = [
      { ...rows[0], value: 'n3w' },
      { ...rows[1], deleted: true },
      { rowKey: 'new-0', type: 'env' as const, name: ' REGION ', value: 'eu', deleted: false },
      { rowKey: 'new-1', type: 'var' as const, name: 'gone', value: 'x', deleted: true },
    ];
    expect(secretOperations(edited)).toEqual([
      { id: 11, type: 'var', name: 'db_password', secret: 'n3w', operation: 'update' },
      { id: 12, type: 'env', name: 'API_TOKEN', secret: '', operation: 'delete' },
      { type: 'env', name: 'REGION', secret: 'eu', operation: 'create' },
    ]);
    expect(secretOperations([{ ...rows[0], name: 'renamed' }])).toEqual([
      { id: 11, type: 'var', name: 'renamed', secret: '', operation: 'update' },
    ]);
  });
});

describe('the environment dialog', () => {
  it('creates an environment with {} defaults and a new secret', async () => {
    const api = stubApi({ 'GET /project/1/environment': [200, []], 'POST /project/1/environment': [204] });
    renderPage();
    expect(await screen.findByText('No environments yet')).toBeInTheDocument();
    fireEvent.click(screen.getByRole('button', { name: 'New Environment' }));
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByLabelText(/^Extra variables/)).toHaveValue('{}');
    expect(within(dialog).getByLabelText(/^Environment variables/)).toHaveValue('{}');
    fireEvent.change(within(dialog).getByLabelText(/^Extra variables/), { target: { value: '{"a":' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create' }));
    expect(within(dialog).getByText('Environment and extra variables must be valid JSON')).toBeInTheDocument();
    expect(within(dialog).getByText('Name is required')).toBeInTheDocument();
    expect(api.writes()).toEqual([]);

    fireEvent.change(within(dialog).getByRole('textbox', { name: /^Name/ }), { target: { value: 'staging' } });
    fireEvent.change(within(dialog).getByLabelText(/^Extra variables/), { target: { value: '{"a": 1}' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Add Secret' }));
    fireEvent.change(within(dialog).getByRole('combobox', { name: 'Type of Secret 1' }), { target: { value: 'env' } });
    fireEvent.change(within(dialog).getByRole('textbox', { name: 'Name of Secret 1' }), { target: { value: 'TOKEN' } });
    fireEvent.change(within(dialog).getByLabelText('Value of TOKEN'), { target: { value: 't0ken' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(api.writes()[0]).toEqual({
      method: 'POST',
      path: '/project/1/environment',
      body: {
        project_id: 1, name: 'staging', json: '{"a": 1}', env: '{}',
        secrets: [{ type: 'env', name: 'TOKEN', secret: 't0ken', operation: 'create' }],
      },
    });
  });

  it('shows stored secrets by name with empty values, and deletes and changes them', async () => {
    const api = stubApi({ 'GET /project/1/environment': [200, [stored]], 'PUT /project/1/environment/2': [204] });
    renderPage();
    fireEvent.click(await screen.findByRole('button', { name: 'Edit production' }));
    const dialog = await screen.findByRole('dialog');
    // Shown indented, though stored compact.
    expect(within(dialog).getByLabelText(/^Extra variables/)).toHaveValue('{\n  "region": "eu"\n}');
    expect(within(dialog).getByRole('textbox', { name: 'Name of db_password' })).toHaveValue('db_password');
    expect(within(dialog).getByLabelText('Value of db_password')).toHaveValue('');
    fireEvent.change(within(dialog).getByLabelText('Value of db_password'), { target: { value: 'rotated' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Delete API_TOKEN' }));
    expect(within(dialog).getByText('Deleted when you save')).toBeInTheDocument();
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.writes()).toHaveLength(1));
    expect(api.writes()[0]).toMatchObject({
      method: 'PUT',
      path: '/project/1/environment/2',
      body: {
        id: 2,
        secrets: [
          { id: 11, type: 'var', name: 'db_password', secret: 'rotated', operation: 'update' },
          { id: 12, type: 'env', name: 'API_TOKEN', secret: '', operation: 'delete' },
        ],
      },
    });
  });
});
