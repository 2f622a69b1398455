// Every resource screen deletes through the same flow (docs/features.md §4: references
// first, then the cannot-delete dialog or a confirmation). Each screen is
// driven here from its own Delete button, so a wrong kind or path on one of
// them cannot hide behind the dialog's own tests.
import type { ReactElement } from 'react';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { EnvironmentsPage } from '../../resources/environments/EnvironmentsPage';
import { InventoriesPage } from '../../resources/inventories/InventoriesPage';
import { KeysPage } from '../../resources/keys/KeysPage';
import { RepositoriesPage } from '../../resources/repositories/RepositoriesPage';
import { stubApi, type Answer } from '../../test/api';
import { admin, project } from '../../test/fixtures';
import { inProject } from '../../test/project';
import { renderWithProviders } from '../../test/render';

const none = { templates: [], inventories: [], repositories: [], schedules: [], integrations: [] };
const usedByTemplate = { ...none, templates: [{ id: 4, name: 'Deploy site' }] };

const key = { id: 7, name: 'deploy key', type: 'ssh', project_id: 1, override_secret: false, empty: false, ssh: { login: '', passphrase: '', private_key: '' }, login_password: { login: '', password: '' } };
const inventory = { id: 3, name: 'production hosts', project_id: 1, inventory: '[web]\nweb1', ssh_key_id: 7, become_key_id: null, type: 'static', repository_id: null };
const environment = { id: 2, name: 'staging vars', project_id: 1, password: '', json: '{}', env: '{}', secrets: [] };
const repository = { id: 5, name: 'site repo', project_id: 1, git_url: 'https://example.com/site.git', git_branch: 'main', ssh_key_id: 7 };

const lists: Record<string, Answer> = {
  'GET /project/1/keys': [200, [key]],
  'GET /project/1/inventory': [200, [inventory]],
  'GET /project/1/environment': [200, [environment]],
  'GET /project/1/repositories': [200, [repository]],
};

const screens: { kind: string; page: ReactElement; name: string; path: string }[] = [
  { kind: 'key', page: <KeysPage />, name: key.name, path: '/project/1/keys/7' },
  { kind: 'inventory', page: <InventoriesPage />, name: inventory.name, path: '/project/1/inventory/3' },
  { kind: 'environment', page: <EnvironmentsPage />, name: environment.name, path: '/project/1/environment/2' },
  { kind: 'repository', page: <RepositoriesPage />, name: repository.name, path: '/project/1/repositories/5' },
];

function renderScreen(page: ReactElement) {
  renderWithProviders(inProject(page, project(1, 'Infra'), admin, 'manager', 5));
}

describe.each(screens)('deleting a $kind from its screen', ({ kind, page, name, path }) => {
  it('reads its references, confirms, then deletes it', async () => {
    const api = stubApi({ ...lists, [`GET ${path}/refs`]: [200, none], [`DELETE ${path}`]: [204] });
    renderScreen(page);
    fireEvent.click(await screen.findByRole('button', { name: `Delete ${name}` }));
    const dialog = await screen.findByRole('dialog', { name: new RegExp(`Delete ${kind}`) });
    expect(api.calls.some((call) => call.method === 'GET' && call.path === `${path}/refs`)).toBe(true);
    expect(api.writes()).toEqual([]);
    fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(api.writes()).toEqual([{ method: 'DELETE', path, body: undefined }]));
  });

  it(`shows "Can't delete the ${kind}" with the template that uses it, and deletes nothing`, async () => {
    const api = stubApi({ ...lists, [`GET ${path}/refs`]: [200, usedByTemplate] });
    renderScreen(page);
    fireEvent.click(await screen.findByRole('button', { name: `Delete ${name}` }));
    const dialog = await screen.findByRole('dialog', { name: new RegExp(`Can't delete the ${kind}`) });
    expect(within(dialog).getByRole('link', { name: 'Deploy site' })).toHaveAttribute('href', '/project/1/templates/4');
    expect(api.writes()).toEqual([]);
  });
});
