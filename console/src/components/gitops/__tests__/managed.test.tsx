import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { stubApi } from '../../../test/api';
import { admin, project } from '../../../test/fixtures';
import { inProject } from '../../../test/project';
import { renderWithProviders } from '../../../test/render';
import { KeysPage } from '../../../resources/keys/KeysPage';
import { ProjectSettingsPage } from '../../../resources/projects/ProjectSettingsPage';
import { TemplateRoutes } from '../../../resources/templates/TemplateRoutes';
import { template } from '../../../resources/templates/__tests__/fixtures';
import { IntegrationPage } from '../../../resources/integrations/IntegrationPage';
import { IntegrationsPage } from '../../../resources/integrations/IntegrationsPage';
import { deployOnPush, mainMatcher, refValue } from '../../../resources/integrations/__tests__/fixtures';
import { EditViewsDialog } from '../../../resources/views/EditViewsDialog';

// Objects a GitOps tool manages (docs/gitops.md) carry managed_by in the
// API's answers: the console names the manager and keeps them read-only.

const infra = project(1, 'Infra');
const key = (id: number, name: string, managed_by?: string) => ({
  id, name, type: 'none', project_id: 1, override_secret: false, empty: true, managed_by,
  ssh: { login: '', passphrase: '', private_key: '' }, login_password: { login: '', password: '' },
});

describe('GitOps-managed objects are read-only in the console', () => {
  it('names the manager on a row and disables its edit and delete', async () => {
    stubApi({ 'GET /project/1/keys': [200, [key(7, 'from git', 'Flux'), key(8, 'hand made')]] });
    renderWithProviders(inProject(<KeysPage />, infra, admin, 'owner', 15), { user: admin });
    const managed = (await screen.findByText('from git')).closest('tr')!;
    expect(await within(managed).findByText('Managed by Flux')).toBeInTheDocument();
    for (const name of ['Edit from git', 'Delete from git']) {
      expect(await within(managed).findByRole('button', { name })).toHaveAttribute('aria-disabled', 'true');
    }
    const own = screen.getByText('hand made').closest('tr')!;
    expect(within(own).queryByText(/Managed by/)).not.toBeInTheDocument();
    for (const name of ['Edit hand made', 'Delete hand made']) {
      expect(within(own).getByRole('button', { name })).not.toHaveAttribute('aria-disabled', 'true');
    }
  });

  it('labels a managed template and its managed schedule, and disables its Edit and Delete, not Run', async () => {
    const managed = template(9, 'Ship it', { managed_by: 'Argo CD' });
    stubApi({
      'GET /project/1/templates/9': [200, managed],
      'GET /project/1/templates': [200, [managed]],
      'GET /project/1/templates/9/schedules': [200, [{ id: 2, project_id: 1, template_id: 9, cron_format: '5 4 * * *', name: '', active: true, repository_id: null, managed_by: 'Flux' }]],
      'GET /project/1/templates/9/tasks/last': [200, []],
      'GET /project/1/views': [200, []],
      'GET /project/1/inventory': [200, []],
      'GET /project/1/environment': [200, []],
      'GET /project/1/repositories': [200, []],
      'GET /project/1/keys': [200, []],
    });
    renderWithProviders(inProject(<TemplateRoutes />, infra, admin, 'owner', 15), {
      path: '/project/1/templates/9', route: '/project/:projectId/templates/*', user: admin,
    });
    expect(await screen.findByText('Managed by Argo CD')).toBeInTheDocument();
    expect(await screen.findByRole('button', { name: 'Edit' })).toHaveAttribute('aria-disabled', 'true');
    expect(screen.getByRole('button', { name: 'Delete' })).toHaveAttribute('aria-disabled', 'true');
    expect(screen.getByRole('button', { name: /Run/ })).not.toHaveAttribute('aria-disabled', 'true');
    // Its schedule, which Flux applies, says so in the schedules table.
    const schedules = screen.getByRole('grid', { name: 'Schedules' });
    expect(await within(schedules).findByText('Managed by Flux')).toBeInTheDocument();
  });

  it('makes a managed project’s settings read-only and its delete unavailable', async () => {
    stubApi({ 'GET /projects': [200, [infra]] });
    renderWithProviders(inProject(<ProjectSettingsPage />, { ...infra, managed_by: 'Flux' }, admin, 'owner', 15), { user: admin });
    expect(await screen.findByText('Managed by Flux')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Save' })).toBeDisabled();
    expect(screen.getByRole('button', { name: 'Delete project' })).toBeDisabled();
  });

  it('keeps a managed view’s title and place in the views dialog, and saves the others around it', async () => {
    const api = stubApi({ 'POST /project/1/views/positions': [204], 'GET /project/1/views': [200, []] });
    const views = [
      { id: 3, project_id: 1, title: 'From Git', position: 4, managed_by: 'Flux' },
      { id: 5, project_id: 1, title: 'Ours', position: 5 },
    ];
    renderWithProviders(<EditViewsDialog projectId={1} views={views} onClose={() => {}} />);
    const dialog = await screen.findByRole('dialog');
    expect(await within(dialog).findByText('Managed by Flux')).toBeInTheDocument();
    expect(within(dialog).getByRole('textbox', { name: 'Title of view 1' })).toBeDisabled();
    for (const name of ['Delete view 1', 'Move view 1 down']) expect(within(dialog).getByRole('button', { name })).toBeDisabled();
    expect(within(dialog).getByRole('textbox', { name: 'Title of view 2' })).toBeEnabled();
    // Ours moves above it: the Flux view keeps 4, Ours shares it (no lower one).
    fireEvent.click(within(dialog).getByRole('button', { name: 'Move view 2 up' }));
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.writes()).toEqual([{ method: 'POST', path: '/project/1/views/positions', body: { '5': 0, '3': 4 } }]));
  });

  it('labels a managed integration and keeps its edit, delete, aliases, matchers and values read-only', async () => {
    const managed = { ...deployOnPush, managed_by: 'Argo CD' };
    stubApi({
      'GET /project/1/integrations': [200, [managed, { ...deployOnPush, id: 6, name: 'Ours' }]],
      'GET /project/1/integrations/aliases': [200, [{ id: 8, url: 'http://x/api/integrations/FROMGITFROMGITFROMGIT', managed_by: 'Argo CD' }]],
      'GET /project/1/integrations/5': [200, managed],
      'GET /project/1/integrations/5/aliases': [200, [{ id: 9, url: 'http://x/api/integrations/OURSOURSOURSOURS' }]],
      'GET /project/1/integrations/5/values': [200, [refValue]],
      'GET /project/1/integrations/5/matchers': [200, [mainMatcher]],
      'GET /project/1/templates': [200, []],
      'GET /project/1/keys': [200, []],
    });
    const list = renderWithProviders(inProject(<IntegrationsPage />, infra, admin, 'owner', 15), { user: admin });
    const row = (await screen.findByRole('link', { name: 'Deploy on push' })).closest('tr')!;
    expect(await within(row).findByText('Managed by Argo CD')).toBeInTheDocument();
    for (const name of ['Edit Deploy on push', 'Delete Deploy on push']) {
      expect(await within(row).findByRole('button', { name })).toHaveAttribute('aria-disabled', 'true');
    }
    expect(screen.getByRole('button', { name: 'Delete Ours' })).not.toHaveAttribute('aria-disabled', 'true');
    // A project alias Argo CD applied: its delete is unavailable.
    expect(await screen.findByRole('button', { name: /^Delete the alias .*FROMGIT/ })).toHaveAttribute('aria-disabled', 'true');
    list.unmount();

    renderWithProviders(inProject(<IntegrationPage />, infra, admin, 'owner', 15), {
      path: '/project/1/integration/5', route: '/project/:projectId/integration/:integrationId', user: admin,
    });
    expect(await screen.findByText('Managed by Argo CD')).toBeInTheDocument();
    expect(await screen.findByText(/OURSOURS/)).toBeInTheDocument();
    expect(await screen.findByRole('cell', { name: 'Main branch' })).toBeInTheDocument();
    for (const name of ['Edit', 'Add Alias', 'New Matcher', 'New Extracted Value', /^Delete the alias/]) {
      expect(screen.queryByRole('button', { name })).not.toBeInTheDocument();
    }
    for (const name of ['Edit Main branch', 'Delete Main branch', 'Edit Ref', 'Delete Ref']) {
      expect(await screen.findByRole('button', { name })).toHaveAttribute('aria-disabled', 'true');
    }
    expect(screen.getByRole('checkbox', { name: 'Available by project and global alias' })).toBeDisabled();
  });
});
