import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { stubApi, type Answer } from '../../../test/api';
import { alice, project } from '../../../test/fixtures';
import { inProject } from '../../../test/project';
import { renderWithProviders } from '../../../test/render';
import { IntegrationsPage } from '../IntegrationsPage';
import { deployOnPush, keys, templates } from './fixtures';

const infra = project(1, 'Infra');
const aliasUrl = 'http://bastion.example/api/integrations/PROJECTALIASPROJECTALIAS12';

function renderList(permissions: number, routes: Record<string, Answer> = {}) {
  const api = stubApi({
    'GET /project/1/integrations': [200, [deployOnPush, { ...deployOnPush, id: 6, name: 'Nightly', template_id: null }]],
    'GET /project/1/integrations/aliases': [200, [{ id: 9, url: aliasUrl }]],
    'GET /project/1/templates': [200, templates],
    'GET /project/1/keys': [200, keys],
    ...routes,
  });
  renderWithProviders(inProject(<IntegrationsPage />, infra, alice, permissions ? 'owner' : 'guest', permissions), {
    path: '/project/1/integrations',
  });
  return api;
}

describe('the integrations list (spec §2)', () => {
  it('links each name to its detail and each template to the template', async () => {
    renderList(15);
    const name = await screen.findByRole('link', { name: 'Deploy on push' });
    expect(name).toHaveAttribute('href', '/project/1/integration/5');
    expect(await screen.findByRole('link', { name: 'Deploy app' })).toHaveAttribute('href', '/project/1/templates/7');
    const nightly = screen.getByRole('row', { name: /Nightly/ });
    expect(within(nightly).queryByRole('link', { name: /app/ })).not.toBeInTheDocument();
  });

  it('lists the project aliases with copy and delete, and Add Alias', async () => {
    const api = renderList(15, {
      'DELETE /project/1/integrations/aliases/9': [204],
      'POST /project/1/integrations/aliases': [201, { id: 10, url: `${aliasUrl}X` }],
    });
    expect(await screen.findByText(aliasUrl)).toBeInTheDocument();
    expect(screen.getByRole('button', { name: `Copy the URL ${aliasUrl}` })).toBeInTheDocument();
    fireEvent.click(screen.getByRole('button', { name: `Delete the alias ${aliasUrl}` }));
    fireEvent.click(screen.getByRole('button', { name: 'Add Alias' }));
    await waitFor(() =>
      expect(api.writes()).toEqual([
        { method: 'DELETE', path: '/project/1/integrations/aliases/9', body: undefined },
        { method: 'POST', path: '/project/1/integrations/aliases', body: {} },
      ]),
    );
  });

  it('shows "Loading aliases..." on Add Alias until the aliases are loaded', async () => {
    stubApi({ 'GET /project/1/integrations': [200, []], 'GET /project/1/templates': [200, templates] });
    const stubbed = globalThis.fetch;
    // The aliases answer only when the test says so.
    let answer: (value: Response) => void = () => {};
    vi.stubGlobal('fetch', (url: string, init?: RequestInit) =>
      url.endsWith('/integrations/aliases') ? new Promise<Response>((resolve) => (answer = resolve)) : stubbed(url, init),
    );
    renderWithProviders(inProject(<IntegrationsPage />, infra, alice, 'owner', 15), { path: '/project/1/integrations' });
    expect(await screen.findByRole('button', { name: 'Loading aliases...' })).toBeDisabled();
    answer(new Response(JSON.stringify([]), { status: 200 }));
    expect(await screen.findByRole('button', { name: 'Add Alias' })).toBeEnabled();
    expect(screen.getByText('No aliases yet.')).toBeInTheDocument();
  });

  it('asks "Are you sure you want to delete this Integration?" before deleting', async () => {
    const api = renderList(15, { 'DELETE /project/1/integrations/5': [204] });
    fireEvent.click(await screen.findByRole('button', { name: 'Delete Deploy on push' }));
    const dialog = await screen.findByRole('dialog');
    expect(dialog).toHaveTextContent('Are you sure you want to delete this Integration?');
    expect(api.writes()).toEqual([]);
    fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(api.writes()).toEqual([{ method: 'DELETE', path: '/project/1/integrations/5', body: undefined }]));
  });

  it('shows all 30 integrations with no pager', async () => {
    const many = Array.from({ length: 30 }, (_, i) => ({ ...deployOnPush, id: 100 + i, name: `Hook ${i}` }));
    renderList(15, { 'GET /project/1/integrations': [200, many] });
    await screen.findByText('Hook 29');
    expect(within(screen.getByRole('grid', { name: 'Integrations' })).getAllByRole('row')).toHaveLength(31);
    expect(document.querySelector('.pf-v6-c-pagination')).toBeNull();
  });

  it('says so when there is no integration yet', async () => {
    renderList(15, { 'GET /project/1/integrations': [200, []] });
    expect(await screen.findByText('No integrations yet')).toBeInTheDocument();
  });

  it('shows the server’s message when the list fails', async () => {
    renderList(15, { 'GET /project/1/integrations': [500, { error: 'etcd is unavailable' }] });
    expect(await screen.findByText('The integrations could not be loaded')).toBeInTheDocument();
    expect(screen.getByText('etcd is unavailable')).toBeInTheDocument();
  });

  it('hides New Integration, edit, delete and the aliases without updateProject (spec §6, issue #19)', async () => {
    const api = renderList(4); // manageProjectResources is not enough
    await screen.findByRole('link', { name: 'Deploy on push' });
    expect(screen.queryByRole('button', { name: 'New Integration' })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /^(Edit|Delete) / })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Add Alias' })).not.toBeInTheDocument();
    // An alias URL is a credential: not asked for, not shown; a line says why.
    expect(screen.getByText('Alias URLs are shown only to those who may change integrations.')).toBeInTheDocument();
    expect(screen.queryByText(aliasUrl)).not.toBeInTheDocument();
    expect(api.calls.map((c) => c.path)).not.toContain('/project/1/integrations/aliases');
  });
});

describe('the integration dialog (spec §2, §4, §5)', () => {
  async function openNew(routes: Record<string, Answer> = {}) {
    const api = renderList(15, { 'POST /project/1/integrations': [201, { ...deployOnPush, id: 30 }], ...routes });
    fireEvent.click(await screen.findByRole('button', { name: 'New Integration' }));
    const dialog = await screen.findByRole('dialog');
    return { api, dialog };
  }

  it('is at most 450 pixels wide', async () => {
    const { dialog } = await openNew();
    expect(dialog).toHaveStyle({ maxWidth: '450px' });
  });

  it('requires a name and makes no call without one', async () => {
    const { api, dialog } = await openNew();
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create' }));
    expect(await within(dialog).findByText('Name is required')).toBeInTheDocument();
    expect(api.writes()).toEqual([]);
  });

  it('shows the auth secret only once an auth method is set, and the header only for token and hmac', async () => {
    const { dialog } = await openNew();
    const method = within(dialog).getByRole('combobox', { name: 'Auth method' });
    expect(within(dialog).queryByRole('combobox', { name: 'Auth secret' })).not.toBeInTheDocument();
    expect(within(dialog).queryByRole('textbox', { name: 'Auth header' })).not.toBeInTheDocument();

    fireEvent.change(method, { target: { value: 'github' } });
    expect(within(dialog).getByRole('combobox', { name: 'Auth secret' })).toBeInTheDocument();
    expect(within(dialog).queryByRole('textbox', { name: 'Auth header' })).not.toBeInTheDocument();

    for (const m of ['token', 'hmac']) {
      fireEvent.change(method, { target: { value: m } });
      expect(within(dialog).getByRole('combobox', { name: 'Auth secret' })).toBeInTheDocument();
      expect(within(dialog).getByRole('textbox', { name: 'Auth header' })).toBeInTheDocument();
    }

    fireEvent.change(method, { target: { value: '' } });
    expect(within(dialog).queryByRole('combobox', { name: 'Auth secret' })).not.toBeInTheDocument();
    expect(within(dialog).queryByRole('textbox', { name: 'Auth header' })).not.toBeInTheDocument();
  });

  it('offers only login_password keys as the auth secret', async () => {
    const { dialog } = await openNew();
    fireEvent.change(within(dialog).getByRole('combobox', { name: 'Auth method' }), { target: { value: 'hmac' } });
    const secret = within(dialog).getByRole('combobox', { name: 'Auth secret' });
    await waitFor(() => expect(within(secret).getAllByRole('option').map((o) => o.textContent)).toEqual(['No secret', 'Webhook secret']));
  });

  it('creates an integration with its template, method, secret and header', async () => {
    const { api, dialog } = await openNew();
    fireEvent.change(within(dialog).getByRole('textbox', { name: 'Name' }), { target: { value: 'Deploy on push' } });
    const template = within(dialog).getByRole('combobox', { name: 'Template' });
    await waitFor(() => expect(within(template).getAllByRole('option')).toHaveLength(3));
    fireEvent.change(template, { target: { value: '7' } });
    fireEvent.change(within(dialog).getByRole('combobox', { name: 'Auth method' }), { target: { value: 'hmac' } });
    const secret = within(dialog).getByRole('combobox', { name: 'Auth secret' });
    await waitFor(() => expect(within(secret).getAllByRole('option')).toHaveLength(2));
    fireEvent.change(secret, { target: { value: '3' } });
    fireEvent.change(within(dialog).getByRole('textbox', { name: 'Auth header' }), { target: { value: 'X-Signature' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create' }));
    await waitFor(() =>
      expect(api.writes()).toEqual([
        {
          method: 'POST',
          path: '/project/1/integrations',
          body: { searchable: false, name: 'Deploy on push', template_id: 7, auth_method: 'hmac', auth_secret_id: 3, auth_header: 'X-Signature' },
        },
      ]),
    );
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
  });

  it('shows the server’s message in the form when the save fails', async () => {
    const { dialog } = await openNew({ 'POST /project/1/integrations': [400, { error: 'Auth secret is required' }] });
    fireEvent.change(within(dialog).getByRole('textbox', { name: 'Name' }), { target: { value: 'Hook' } });
    fireEvent.change(within(dialog).getByRole('combobox', { name: 'Auth method' }), { target: { value: 'github' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create' }));
    expect(await within(dialog).findByTestId('save-error')).toHaveTextContent('Auth secret is required');
  });

  it('edits an integration with a PUT that keeps searchable and task_params', async () => {
    const api = renderList(15, { 'PUT /project/1/integrations/5': [204] });
    fireEvent.click(await screen.findByRole('button', { name: 'Edit Deploy on push' }));
    const dialog = await screen.findByRole('dialog', { name: 'Edit Integration' });
    expect(within(dialog).getByRole('textbox', { name: 'Auth header' })).toHaveValue('X-Signature');
    fireEvent.change(within(dialog).getByRole('textbox', { name: 'Name' }), { target: { value: 'Deploy main' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() =>
      expect(api.writes()).toEqual([
        {
          method: 'PUT',
          path: '/project/1/integrations/5',
          body: { id: 5, searchable: false, task_params: {}, name: 'Deploy main', template_id: 7, auth_method: 'hmac', auth_secret_id: 3, auth_header: 'X-Signature' },
        },
      ]),
    );
  });
});
