import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { stubApi, type Answer } from '../../../test/api';
import { admin, project } from '../../../test/fixtures';
import { inProject } from '../../../test/project';
import { renderWithProviders } from '../../../test/render';
import { TemplateRoutes } from '../TemplateRoutes';
import { template } from './fixtures';

// The editor loads lazily. Its modules are transformed once here, so that the
// first test waits for the editor's behaviour rather than for that transform,
// which takes seconds on a loaded machine and outlasted findBy's 5 s.
beforeAll(async () => {
  await import('../TemplateEditor');
}, 60_000);

const infra = project(1, 'Infra');
const reads: Record<string, Answer> = {
  'GET /project/1/templates': [200, [template(7, 'Build app', { type: 'build', start_version: '1.0.0' })]],
  'GET /project/1/views': [200, [{ id: 4, project_id: 1, title: 'Prod', position: 0 }]],
  'GET /project/1/inventory': [200, [{ id: 6, name: 'Web hosts' }]],
  'GET /project/1/environment': [200, [{ id: 4, name: 'Empty' }]],
  'GET /project/1/repositories': [200, [{ id: 3, name: 'Playbooks' }]],
  'GET /project/1/keys': [200, [{ id: 8, name: 'Vault password' }]],
  'GET /apps': [200, [
    { id: 'ansible', active: true, priority: 500, title: 'Ansible Playbook', icon: '', color: '', dark_color: '' },
    { id: 'terraform', active: true, priority: 400, title: 'Terraform Code', icon: '', color: '', dark_color: '' },
    { id: 'bash', active: true, priority: 200, title: 'Bash Script', icon: '', color: '', dark_color: '' },
  ]],
};

function renderEditor(path = '/project/1/templates/new') {
  return renderWithProviders(inProject(<TemplateRoutes />, infra, admin, 'owner', 15), { path, route: '/project/:projectId/templates/*' });
}

const field = (name: string | RegExp) => screen.getByLabelText(name);

async function fillRequired() {
  await waitFor(() => expect(within(field(/^Repository/) as HTMLElement).getAllByRole('option')).toHaveLength(2));
  await waitFor(() => expect(within(field(/^Environment/) as HTMLElement).getAllByRole('option')).toHaveLength(2));
  fireEvent.change(field(/^Name/), { target: { value: 'Ping hosts' } });
  fireEvent.change(field(/^Playbook filename/), { target: { value: 'ping.yml' } });
  fireEvent.change(field(/^Repository/), { target: { value: '3' } });
  fireEvent.change(field(/^Environment/), { target: { value: '4' } });
}

describe('the template editor', () => {
  it('redirects new to new/edit and shows the placeholders', async () => {
    stubApi(reads);
    renderEditor();
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/project/1/templates/new/edit'));
    expect(await screen.findByRole('heading', { name: 'New template' })).toBeInTheDocument();
    expect(field(/^Playbook filename/)).toHaveAttribute('placeholder', 'site.yml');
    expect(field(/^Cron/)).toHaveAttribute('placeholder', '0 0 * * *');
    fireEvent.change(field(/^Type/), { target: { value: 'build' } });
    expect(field(/^Start version/)).toHaveAttribute('placeholder', '0.0.0');
  });

  it('shows the spec’s messages and makes no call when required fields are empty', async () => {
    const api = stubApi(reads);
    renderEditor('/project/1/templates/new/edit');
    fireEvent.click(await screen.findByRole('button', { name: 'Create' }));
    for (const message of ['Name is required', 'Playbook filename is required', 'Repository is required', 'Environment is required']) {
      expect(await screen.findByText(message)).toBeInTheDocument();
    }
    fireEvent.change(field(/^Type/), { target: { value: 'deploy' } });
    expect(await screen.findByText('Build template is required')).toBeInTheDocument();
    fireEvent.change(field(/^Type/), { target: { value: 'build' } });
    expect(await screen.findByText('Start version is required')).toBeInTheDocument();
    expect(api.writes()).toEqual([]);
  });

  it('says nothing before the first save (docs/features.md §5: lazy validation)', async () => {
    stubApi(reads);
    renderEditor('/project/1/templates/new/edit');
    await screen.findByRole('button', { name: 'Create' });
    fireEvent.change(field(/^Name/), { target: { value: 'x' } });
    fireEvent.change(field(/^Name/), { target: { value: '' } });
    fireEvent.change(field(/^Type/), { target: { value: 'deploy' } });
    expect(screen.queryByText(/is required/)).not.toBeInTheDocument();
  });

  it('disables every input while saving (docs/features.md §4)', async () => {
    stubApi(reads);
    renderEditor('/project/1/templates/new/edit');
    await screen.findByRole('button', { name: 'Create' });
    await fillRequired();
    // The save never answers: the form stays in its saving state.
    const answering = globalThis.fetch;
    vi.stubGlobal('fetch', (input: RequestInfo | URL, init?: RequestInit) =>
      init?.method === 'POST' ? new Promise<Response>(() => {}) : answering(input, init),
    );
    fireEvent.click(screen.getByRole('button', { name: 'Create' }));
    await waitFor(() => expect(field(/^Name/)).toBeDisabled());
    for (const name of [/^Playbook filename/, /^Repository/, /^Environment/, /^Type/, /^Cron/]) expect(field(name)).toBeDisabled();
  });

  it('has the server check the cron expression before saving anything', async () => {
    const api = stubApi({ ...reads, 'POST /project/1/schedules/validate': [400, { error: 'Cron: expected exactly 5 fields, found 2: [every day]' }] });
    renderEditor('/project/1/templates/new/edit');
    await screen.findByRole('button', { name: 'Create' });
    await fillRequired();
    fireEvent.change(field(/^Cron/), { target: { value: 'every day' } });
    fireEvent.click(screen.getByRole('button', { name: 'Create' }));
    expect(await screen.findByText('Cron: expected exactly 5 fields, found 2: [every day]')).toBeInTheDocument();
    expect(api.writes()).toEqual([{ method: 'POST', path: '/project/1/schedules/validate', body: { cron_format: 'every day' } }]);
  });

  it('creates the template, its survey and its schedule that runs only on a new commit', async () => {
    const api = stubApi({
      ...reads,
      'POST /project/1/schedules/validate': [200],
      'POST /project/1/templates': (body) => [201, { ...template(12, 'Ping hosts'), ...(body as object), id: 12 }],
      'POST /project/1/schedules': [201, {}],
      'GET /project/1/templates/12': [200, template(12, 'Ping hosts')],
      'GET /project/1/templates/12/schedules': [200, []],
    });
    renderEditor('/project/1/templates/new/edit');
    await screen.findByRole('button', { name: 'Create' });
    await fillRequired();
    fireEvent.change(field(/^Arguments$/), { target: { value: '["-v"]' } });
    fireEvent.change(field(/^Cron/), { target: { value: '0 0 * * *' } });
    fireEvent.click(field('Run only on a new commit of the repository'));

    fireEvent.click(screen.getByRole('button', { name: 'Add variable' }));
    const dialog = await screen.findByRole('dialog');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Add' }));
    expect(await within(dialog).findByText('Name is required')).toBeInTheDocument();
    expect(within(dialog).getByText('Title is required')).toBeInTheDocument();
    fireEvent.change(within(dialog).getByLabelText(/^Name/), { target: { value: '  count ' } });
    fireEvent.change(within(dialog).getByLabelText(/^Title/), { target: { value: 'How many' } });
    fireEvent.change(within(dialog).getByLabelText('Type'), { target: { value: 'int' } });
    fireEvent.click(within(dialog).getByLabelText('Required'));
    fireEvent.click(within(dialog).getByRole('button', { name: 'Add' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(screen.getByText('count')).toBeInTheDocument();
    // The survey dialog's own submit saved nothing.
    expect(api.writes()).toEqual([]);

    fireEvent.click(screen.getByRole('button', { name: 'Create' }));
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent(/^\/project\/1\/templates\/12$/));
    const writes = api.writes();
    expect(writes.map((w) => `${w.method} ${w.path}`)).toEqual([
      'POST /project/1/schedules/validate',
      'POST /project/1/templates',
      'POST /project/1/schedules',
    ]);
    expect(writes[1].body).toMatchObject({
      name: 'Ping hosts', playbook: 'ping.yml', repository_id: 3, environment_id: 4, inventory_id: null, type: '', app: '',
      arguments: '["-v"]',
      survey_vars: [{ name: 'count', title: 'How many', description: '', type: 'int', required: true }],
    });
    expect(writes[2].body).toEqual({ template_id: 12, cron_format: '0 0 * * *', name: '', repository_id: 3 });
  });

  it('edits a template with its schedule, and deletes the schedule when the cron is cleared', async () => {
    const existing = template(7, 'Build app', { type: 'build', start_version: '1.0.0' });
    const api = stubApi({
      ...reads,
      'GET /project/1/templates/7': [200, existing],
      'GET /project/1/templates/7/schedules': [200, [{ id: 2, project_id: 1, template_id: 7, cron_format: '5 4 * * *', name: '', active: true, repository_id: null }]],
      'PUT /project/1/templates/7': [204],
      'DELETE /project/1/schedules/2': [204],
    });
    renderEditor('/project/1/templates/7/edit');
    expect(await screen.findByRole('heading', { name: 'Edit template' })).toBeInTheDocument();
    expect(field(/^Cron/)).toHaveValue('5 4 * * *');
    expect(field(/^Start version/)).toHaveValue('1.0.0');
    fireEvent.change(field(/^Cron/), { target: { value: '' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent(/^\/project\/1\/templates\/7$/));
    expect(api.writes().map((w) => `${w.method} ${w.path}`)).toEqual(['PUT /project/1/templates/7', 'DELETE /project/1/schedules/2']);
    expect(api.writes()[0].body).toMatchObject({ id: 7, start_version: '1.0.0', type: 'build' });
  });

  it('shows a schedule a GitOps tool manages read-only, and saves the template without it', async () => {
    const existing = template(7, 'Build app', { type: 'build', start_version: '1.0.0' });
    const api = stubApi({
      ...reads,
      'GET /project/1/templates/7': [200, existing],
      'GET /project/1/templates/7/schedules': [200, [{ id: 2, project_id: 1, template_id: 7, cron_format: '5 4 * * *', name: '', active: true, repository_id: null, managed_by: 'Flux' }]],
      'POST /project/1/schedules/validate': [200],
      'PUT /project/1/templates/7': [204],
    });
    renderEditor('/project/1/templates/7/edit');
    expect(await screen.findByText('Managed by Flux')).toBeInTheDocument();
    expect(field(/^Cron/)).toBeDisabled();
    expect(screen.getByRole('switch', { name: 'Run only on a new commit of the repository' })).toBeDisabled();
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent(/^\/project\/1\/templates\/7$/));
    expect(api.writes().map((w) => `${w.method} ${w.path}`)).toEqual(['POST /project/1/schedules/validate', 'PUT /project/1/templates/7']);
  });

  it('lets a task choose its branch, inventory, playbook and other variables only when switched on (off by default)', async () => {
    const existing = template(7, 'Build app', { allow_override_inventory_in_task: true });
    const api = stubApi({
      ...reads,
      'GET /project/1/templates/7': [200, existing],
      'GET /project/1/templates/7/schedules': [200, []],
      'PUT /project/1/templates/7': [204],
    });
    renderEditor('/project/1/templates/7/edit');
    await screen.findByRole('heading', { name: 'Edit template' });
    const branch = field('Allow a task to choose its branch or commit');
    const extraVars = field('Allow a task to set variables other than the survey’s');
    expect(branch).not.toBeChecked();
    expect(field('Allow a task to choose its inventory')).toBeChecked();
    expect(field('Allow a task to choose its playbook')).not.toBeChecked();
    expect(extraVars).not.toBeChecked();
    expect(screen.getByText(/\(ansible_\*, PATH, LD_\*, …\) are always refused/)).toBeInTheDocument();
    fireEvent.click(branch);
    fireEvent.click(extraVars);
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.writes()).toHaveLength(1));
    expect(api.writes()[0].body).toMatchObject({
      id: 7,
      allow_override_branch_in_task: true,
      allow_override_inventory_in_task: true,
      allow_override_playbook_in_task: false,
      allow_override_extra_vars_in_task: true,
    });
  });

  it('sends every switch off for a new template', async () => {
    const api = stubApi({
      ...reads,
      'POST /project/1/templates': (body) => [201, { ...template(12, 'Ping hosts'), ...(body as object), id: 12 }],
      'GET /project/1/templates/12': [200, template(12, 'Ping hosts')],
      'GET /project/1/templates/12/schedules': [200, []],
    });
    renderEditor('/project/1/templates/new/edit');
    await screen.findByRole('button', { name: 'Create' });
    await fillRequired();
    fireEvent.click(screen.getByRole('button', { name: 'Create' }));
    await waitFor(() => expect(api.writes()).toHaveLength(1));
    expect(api.writes()[0].body).toMatchObject({
      allow_override_args_in_task: false,
      allow_override_branch_in_task: false,
      allow_override_inventory_in_task: false,
      allow_override_playbook_in_task: false,
      allow_override_extra_vars_in_task: false,
    });
  });
});
