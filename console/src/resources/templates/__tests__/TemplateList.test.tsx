import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { Route, Routes } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import { stubApi } from '../../../test/api';
import { admin, alice, project } from '../../../test/fixtures';
import { inProject } from '../../../test/project';
import { renderWithProviders } from '../../../test/render';
import { TemplateRoutes } from '../TemplateRoutes';
import { task, template } from './fixtures';

const infra = project(1, 'Infra');
const templates = [
  template(1, 'Build app', { type: 'build', start_version: '1.0.0', last_task: task(21, { version: '1.0.3', status: 'success' }) }),
  template(2, 'Deploy app', {
    type: 'deploy', app: 'bash', build_template_id: 1,
    last_task: task(22, { status: 'running', build_task_id: 21, build_task: task(21, { version: '1.0.3' }) }),
  }),
  template(3, 'Ping', { app: 'terraform', inventory_id: 6 }),
];
const routes = {
  'GET /project/1/templates': [200, templates] as [number, unknown],
  'GET /project/1/views': [200, [{ id: 4, project_id: 1, title: 'Prod', position: 0 }]] as [number, unknown],
  'GET /project/1/inventory': [200, [{ id: 6, name: 'Web hosts' }]] as [number, unknown],
  'GET /project/1/environment': [200, [{ id: 4, name: 'Empty' }]] as [number, unknown],
  'GET /project/1/repositories': [200, [{ id: 3, name: 'Playbooks' }]] as [number, unknown],
  'GET /apps': [200, []] as [number, unknown],
};

function renderList(permissions = 15, user = admin, path = '/project/1/templates') {
  return renderWithProviders(inProject(<TemplateRoutes />, infra, user, permissions ? 'owner' : 'guest', permissions), {
    path,
    route: '/project/:projectId/templates/*',
    user,
  });
}

const rowOf = (name: string) => screen.getByRole('link', { name }).closest('tr')!;

describe('the template list (docs/features.md §2)', () => {
  it('shows version, status and the action of each type, and Not launched for a template that never ran', async () => {
    stubApi(routes);
    renderList();
    await screen.findByRole('link', { name: 'Build app' });
    expect(within(rowOf('Build app')).getByText('1.0.3')).toBeInTheDocument();
    expect(within(rowOf('Build app')).getByRole('button', { name: 'Build Build app' })).toBeInTheDocument();
    expect(within(rowOf('Deploy app')).getByText('1.0.3')).toBeInTheDocument();
    expect(within(rowOf('Deploy app')).getByRole('button', { name: 'Deploy Deploy app' })).toBeInTheDocument();
    expect(within(rowOf('Ping')).getByText('Not launched')).toBeInTheDocument();
    expect(within(rowOf('Ping')).getByRole('button', { name: 'Run Ping' })).toBeInTheDocument();
    expect(await within(rowOf('Ping')).findByText('Web hosts')).toBeInTheDocument();
    expect(within(rowOf('Ping')).getByRole('img', { name: 'Terraform Code' })).toBeInTheDocument();
    expect(within(rowOf('Build app')).getByRole('img', { name: 'Ansible Playbook' })).toBeInTheDocument();
    expect(within(rowOf('Deploy app')).getByRole('img', { name: 'Bash Script' })).toBeInTheDocument();
    expect(screen.getByRole('tab', { name: 'Prod' })).toBeInTheDocument();
  });

  it('expands a row to the template’s last 5 tasks', async () => {
    const api = stubApi({
      ...routes,
      'GET /project/1/templates/1/tasks/last?limit=5': [200, [task(21, { version: '1.0.3' }), task(20, { version: '1.0.2', status: 'error' })]],
    });
    renderList();
    fireEvent.click(await screen.findByRole('button', { name: 'Last tasks of Build app' }));
    const table = await screen.findByRole('grid', { name: 'Last tasks of Build app' });
    expect(within(table).getByRole('link', { name: '#20' })).toBeInTheDocument();
    expect(within(table).getByText('1.0.2')).toBeInTheDocument();
    expect(api.calls.some((c) => c.path === '/project/1/templates/1/tasks/last?limit=5')).toBe(true);
  });

  it('hides a column through the column settings and keeps the choice in the browser', async () => {
    stubApi(routes);
    const first = renderList();
    await screen.findByRole('link', { name: 'Build app' });
    expect(screen.getByRole('columnheader', { name: 'Playbook' })).toBeInTheDocument();
    fireEvent.click(screen.getByRole('button', { name: 'Columns' }));
    fireEvent.click(await screen.findByRole('checkbox', { name: 'Playbook' }));
    expect(screen.queryByRole('columnheader', { name: 'Playbook' })).not.toBeInTheDocument();
    expect(screen.getByRole('checkbox', { name: 'Name' })).toBeDisabled();
    first.unmount();
    renderList();
    await screen.findByRole('link', { name: 'Build app' });
    expect(screen.queryByRole('columnheader', { name: 'Playbook' })).not.toBeInTheDocument();
    expect(screen.getByRole('columnheader', { name: 'Repository' })).toBeInTheDocument();
  });

  it('offers no new template, view editing or run to a guest', async () => {
    stubApi(routes);
    renderList(0, { ...alice });
    await screen.findByRole('link', { name: 'Build app' });
    expect(screen.queryByRole('button', { name: 'New template' })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Edit views' })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /^Run / })).not.toBeInTheDocument();
  });

  it('goes to the view opened last, and remembers the choice of All', async () => {
    localStorage.setItem('project1__lastVisitedViewId', '4');
    stubApi({ ...routes, 'GET /project/1/views/4/templates': [200, [templates[2]]] });
    // Mounted as ProjectRoutes mounts it: at templates/* and at views/*.
    const both = (
      <Routes>
        <Route path="templates/*" element={<TemplateRoutes />} />
        <Route path="views/*" element={<TemplateRoutes />} />
      </Routes>
    );
    renderWithProviders(inProject(both, infra, admin, 'owner', 15), { path: '/project/1/templates', route: '/project/:projectId/*' });
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/project/1/views/4/templates'));
    expect(await screen.findByRole('link', { name: 'Ping' })).toBeInTheDocument();
    fireEvent.click(screen.getByRole('tab', { name: 'All' }));
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent(/^\/project\/1\/templates$/));
    await waitFor(() => expect(localStorage.getItem('project1__lastVisitedViewId')).toBeNull());
  });

  it('offers Run all on a view’s tab to whoever may run tasks, not on All nor to a guest (issue #23)', async () => {
    const inViews = (
      <Routes>
        <Route path="templates/*" element={<TemplateRoutes />} />
        <Route path="views/*" element={<TemplateRoutes />} />
      </Routes>
    );
    const view = { ...routes, 'GET /project/1/views/4/templates': [200, [templates[2]]] as [number, unknown] };
    for (const [role, permissions, path, offered] of [
      ['task_runner', 1, '/project/1/views/4/templates', true],
      ['guest', 0, '/project/1/views/4/templates', false],
      ['owner', 15, '/project/1/templates', false],
    ] as const) {
      stubApi(view);
      const shown = renderWithProviders(inProject(inViews, infra, { ...alice }, role, permissions), { path, route: '/project/:projectId/*' });
      await screen.findByRole('link', { name: 'Ping' });
      expect(screen.queryByRole('button', { name: 'Run all' }) !== null).toBe(offered);
      shown.unmount();
      localStorage.clear();
    }
  });

  it('shows an empty state when the project has no templates', async () => {
    stubApi({ ...routes, 'GET /project/1/templates': [200, []] });
    renderList();
    expect(await screen.findByText('No templates yet')).toBeInTheDocument();
  });

  it('shows the server’s message when the list cannot be loaded', async () => {
    stubApi({ ...routes, 'GET /project/1/templates': [500, { error: 'the cluster is unreachable' }] });
    renderList();
    expect(await screen.findByText('The templates could not be loaded')).toBeInTheDocument();
    expect(screen.getByText('the cluster is unreachable')).toBeInTheDocument();
  });
});
