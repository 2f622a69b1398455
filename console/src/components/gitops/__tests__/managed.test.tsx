import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { stubApi } from '../../../test/api';
import { admin, project } from '../../../test/fixtures';
import { inProject } from '../../../test/project';
import { renderWithProviders } from '../../../test/render';
import { KeysPage } from '../../../resources/keys/KeysPage';
import { ProjectSettingsPage } from '../../../resources/projects/ProjectSettingsPage';
import { TemplateRoutes } from '../../../resources/templates/TemplateRoutes';
import { template } from '../../../resources/templates/__tests__/fixtures';

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

  it('labels a managed template and disables its Edit and Delete, not Run', async () => {
    const managed = template(9, 'Ship it', { managed_by: 'Argo CD' });
    stubApi({
      'GET /project/1/templates/9': [200, managed],
      'GET /project/1/templates': [200, [managed]],
      'GET /project/1/templates/9/schedules': [200, []],
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
  });

  it('makes a managed project’s settings read-only and its delete unavailable', async () => {
    stubApi({ 'GET /projects': [200, [infra]] });
    renderWithProviders(inProject(<ProjectSettingsPage />, { ...infra, managed_by: 'Flux' }, admin, 'owner', 15), { user: admin });
    expect(await screen.findByText('Managed by Flux')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Save' })).toBeDisabled();
    expect(screen.getByRole('button', { name: 'Delete project' })).toBeDisabled();
  });
});
