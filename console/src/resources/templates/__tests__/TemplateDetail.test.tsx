import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { stubApi, type Answer } from '../../../test/api';
import { admin, alice, project } from '../../../test/fixtures';
import { inProject } from '../../../test/project';
import { renderWithProviders } from '../../../test/render';
import { TemplateRoutes } from '../TemplateRoutes';
import { template } from './fixtures';

const infra = project(1, 'Infra');
const deploy = template(9, 'Ship it', {
  type: 'deploy', app: 'terraform', build_template_id: 7, autorun: true, inventory_id: 6, view_id: 4,
  vaults: [{ id: 1, vault_key_id: 8, name: '' }], arguments: '["-v"]', description: 'Ships the site',
  survey_vars: [{ name: 'count', title: 'How many', description: '', type: 'int', required: true }],
});
const reads: Record<string, Answer> = {
  'GET /project/1/templates/9': [200, deploy],
  'GET /project/1/templates': [200, [template(7, 'Build app', { type: 'build' }), deploy]],
  'GET /project/1/templates/9/schedules': [200, [{ id: 2, project_id: 1, template_id: 9, cron_format: '0 0 * * *', name: '', active: true, repository_id: 3 }]],
  'GET /project/1/templates/9/tasks/last': [200, []],
  'GET /project/1/views': [200, [{ id: 4, project_id: 1, title: 'Prod', position: 0 }]],
  'GET /project/1/inventory': [200, [{ id: 6, name: 'Web hosts' }]],
  'GET /project/1/environment': [200, [{ id: 4, name: 'Empty' }]],
  'GET /project/1/repositories': [200, [{ id: 3, name: 'Playbooks' }]],
  'GET /project/1/keys': [200, [{ id: 8, name: 'Vault password' }]],
};

function renderDetail(permissions = 15, user = admin) {
  return renderWithProviders(inProject(<TemplateRoutes />, infra, user, permissions ? 'owner' : 'guest', permissions), {
    path: '/project/1/templates/9',
    route: '/project/:projectId/templates/*',
    user,
  });
}

describe('the template detail (docs/features.md §2)', () => {
  it('shows the settings, the schedule and the actions', async () => {
    stubApi(reads);
    renderDetail();
    expect(await screen.findByRole('heading', { name: 'Ship it' })).toBeInTheDocument();
    const settings = (term: string) => screen.getByText(term, { selector: 'dt *, dt' }).closest('div')!;
    await waitFor(() => expect(settings('Build template')).toHaveTextContent('Build app'));
    expect(settings('Inventory')).toHaveTextContent('Web hosts');
    expect(settings('Vault key')).toHaveTextContent('Vault password');
    expect(settings('View')).toHaveTextContent('Prod');
    expect(settings('App')).toHaveTextContent('Terraform Code');
    expect(settings('Autorun')).toHaveTextContent('Yes');
    expect(settings('Survey variables')).toHaveTextContent('How many (count)');
    expect(await screen.findByText('Only on a new commit of Playbooks')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Deploy Ship it' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Edit' })).toBeInTheDocument();
  });

  it('deletes through the delete dialog and names the template in quotes', async () => {
    // The real dialog (its own flow is tested in components/): here what
    // matters is that it is given this template's kind, name and path.
    const none = { templates: [], inventories: [], repositories: [], schedules: [], integrations: [] };
    const api = stubApi({
      ...reads,
      'GET /project/1/templates/9/refs': [200, none],
      'DELETE /project/1/templates/9': [204],
    });
    renderDetail();
    fireEvent.click(await screen.findByRole('button', { name: 'Delete' }));
    const dialog = await screen.findByRole('dialog', { name: /Delete template/ });
    expect(dialog).toHaveTextContent('"Ship it"');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(api.writes()).toEqual([{ method: 'DELETE', path: '/project/1/templates/9', body: undefined }]));
    expect(await screen.findByText('Template "Ship it" deleted')).toBeInTheDocument();
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent(/^\/project\/1\/templates$/));
  });

  it('opens the same detail under a view, /views/{vid}/templates/{tid} (docs/features.md §2)', async () => {
    stubApi(reads);
    renderWithProviders(inProject(<TemplateRoutes />, infra, admin, 'owner', 15), {
      path: '/project/1/views/4/templates/9',
      route: '/project/:projectId/views/*',
    });
    expect(await screen.findByRole('heading', { name: 'Ship it' })).toBeInTheDocument();
    expect(await screen.findByText('Only on a new commit of Playbooks')).toBeInTheDocument();
    expect(screen.getByTestId('location')).toHaveTextContent(/^\/project\/1\/views\/4\/templates\/9$/);
  });

  it('offers no edit, delete or run to a guest', async () => {
    stubApi(reads);
    renderDetail(0, alice);
    expect(await screen.findByRole('heading', { name: 'Ship it' })).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Edit' })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Delete' })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /^Deploy/ })).not.toBeInTheDocument();
  });

  it('sends a guest who opens the editor by address to the template', async () => {
    stubApi(reads);
    renderWithProviders(inProject(<TemplateRoutes />, infra, alice, 'guest', 0), {
      path: '/project/1/templates/9/edit',
      route: '/project/:projectId/templates/*',
      user: alice,
    });
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent(/^\/project\/1\/templates\/9$/));
    expect(await screen.findByRole('heading', { name: 'Ship it' })).toBeInTheDocument();
  });
});
