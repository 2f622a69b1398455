import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { stubApi, type Answer } from '../../../test/api';
import { alice, project } from '../../../test/fixtures';
import { inProject } from '../../../test/project';
import { renderWithProviders } from '../../../test/render';
import { IntegrationPage } from '../IntegrationPage';
import { deployOnPush, eventValue, keys, mainMatcher, pushMatcher, refValue, templates } from './fixtures';

const infra = project(1, 'Infra');
const aliasUrl = 'http://bastion.example/api/integrations/INTEGRATIONALIASINTEGRAT';

function renderDetail(permissions: number, routes: Record<string, Answer> = {}) {
  const api = stubApi({
    'GET /project/1/integrations/5': [200, deployOnPush],
    'GET /project/1/integrations/5/aliases': [200, [{ id: 9, url: aliasUrl }]],
    'GET /project/1/integrations/5/values': [200, [refValue, eventValue]],
    'GET /project/1/integrations/5/matchers': [200, [mainMatcher, pushMatcher]],
    'GET /project/1/templates': [200, templates],
    'GET /project/1/keys': [200, keys],
    ...routes,
  });
  renderWithProviders(inProject(<IntegrationPage />, infra, alice, permissions ? 'owner' : 'guest', permissions), {
    path: '/project/1/integration/5',
    route: '/project/:projectId/integration/:integrationId',
  });
  return api;
}

const cells = (row: HTMLElement) => within(row).getAllByRole('cell').map((c) => c.textContent);

describe('the integration detail (spec §2)', () => {
  it('shows the breadcrumb Integrations > name', async () => {
    renderDetail(15);
    const crumbs = await screen.findByRole('navigation', { name: 'Breadcrumb' });
    await waitFor(() => expect(crumbs).toHaveTextContent('Deploy on push'));
    expect(within(crumbs).getByRole('link', { name: 'Integrations' })).toHaveAttribute('href', '/project/1/integrations');
    expect(screen.getByRole('heading', { level: 1, name: 'Deploy on push' })).toBeInTheDocument();
  });

  it('lists its own aliases with copy, delete and Add Alias', async () => {
    const api = renderDetail(15, {
      'POST /project/1/integrations/5/aliases': [201, { id: 10, url: `${aliasUrl}2` }],
      'DELETE /project/1/integrations/5/aliases/9': [204],
    });
    expect(await screen.findByText(aliasUrl)).toBeInTheDocument();
    expect(screen.getByRole('button', { name: `Copy the URL ${aliasUrl}` })).toBeInTheDocument();
    fireEvent.click(screen.getByRole('button', { name: 'Add Alias' }));
    fireEvent.click(screen.getByRole('button', { name: `Delete the alias ${aliasUrl}` }));
    await waitFor(() =>
      expect(api.writes()).toEqual([
        { method: 'POST', path: '/project/1/integrations/5/aliases', body: {} },
        { method: 'DELETE', path: '/project/1/integrations/5/aliases/9', body: undefined },
      ]),
    );
  });

  it('saves "Available by project and global alias" at once', async () => {
    const api = renderDetail(15, { 'PUT /project/1/integrations/5': [204] });
    const box = await screen.findByRole('checkbox', { name: 'Available by project and global alias' });
    expect(box).not.toBeChecked();
    fireEvent.click(box);
    await waitFor(() =>
      expect(api.writes()).toEqual([{ method: 'PUT', path: '/project/1/integrations/5', body: { ...deployOnPush, searchable: true } }]),
    );
  });

  it('shows the extracted values: name, value source, body data type, key, environment variable', async () => {
    renderDetail(15);
    const table = await screen.findByRole('grid', { name: 'Extracted values' });
    const [head, ...rows] = within(table).getAllByRole('row');
    expect(within(head).getAllByRole('columnheader').map((c) => c.textContent)).toEqual([
      'Name', 'Value source', 'Body data type', 'Key', 'Environment variable', 'Actions',
    ]);
    expect(rows.map(cells).map((c) => c.slice(0, 5))).toEqual([
      ['Ref', 'Body', 'JSON', 'ref', 'GIT_REF'],
      ['Event', 'Header', 'N/A', 'X-Event', 'EVENT'],
    ]);
    expect(screen.getByRole('button', { name: 'New Extracted Value' })).toBeInTheDocument();
  });

  it('shows the matchers: name, match type, method, body data type (N/A when empty), key, value', async () => {
    renderDetail(15);
    const table = await screen.findByRole('grid', { name: 'Matchers' });
    const [head, ...rows] = within(table).getAllByRole('row');
    expect(within(head).getAllByRole('columnheader').map((c) => c.textContent)).toEqual([
      'Name', 'Match type', 'Method', 'Body data type', 'Key', 'Value', 'Actions',
    ]);
    expect(rows.map(cells).map((c) => c.slice(0, 6))).toEqual([
      ['Main branch', 'Body', 'Equals', 'JSON', 'ref', 'refs/heads/main'],
      ['Push event', 'Header', 'Contains', 'N/A', 'X-Event', 'push'],
    ]);
    expect(screen.getByRole('button', { name: 'New Matcher' })).toBeInTheDocument();
  });

  it('keeps matcher and extracted value actions for everyone, but the integration’s own and its aliases for updateProject (spec §6)', async () => {
    const api = renderDetail(0);
    await screen.findByRole('grid', { name: 'Matchers' });
    expect(screen.getByRole('button', { name: 'New Matcher' })).toBeEnabled();
    expect(screen.getByRole('button', { name: 'New Extracted Value' })).toBeEnabled();
    expect(screen.getByRole('button', { name: 'Edit Main branch' })).toBeEnabled();
    expect(screen.getByRole('button', { name: 'Delete Ref' })).toBeEnabled();
    expect(screen.getByRole('checkbox', { name: 'Available by project and global alias' })).toBeDisabled();
    expect(screen.queryByRole('button', { name: 'Add Alias' })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /Delete the alias/ })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Edit' })).not.toBeInTheDocument();
    // The aliases are credentials the server keeps from this member.
    expect(screen.getByText('Alias URLs are shown only to those who may change integrations.')).toBeInTheDocument();
    expect(screen.queryByText(aliasUrl)).not.toBeInTheDocument();
    expect(api.calls.map((c) => c.path)).not.toContain('/project/1/integrations/5/aliases');
  });

  it('shows a member without updateProject the server’s refusal in the matcher form (issue #19)', async () => {
    const refusal = 'you need the updateProject permission in this project';
    const api = renderDetail(0, { 'POST /project/1/integrations/5/matchers': [403, { error: refusal }] });
    fireEvent.click(await screen.findByRole('button', { name: 'New Matcher' }));
    const dialog = await screen.findByRole('dialog', { name: 'New Matcher' });
    fireEvent.change(within(dialog).getByRole('textbox', { name: 'Name' }), { target: { value: 'Push event' } });
    fireEvent.change(within(dialog).getByRole('combobox', { name: 'Match type' }), { target: { value: 'header' } });
    fireEvent.change(within(dialog).getByRole('textbox', { name: 'Key' }), { target: { value: 'X-Event' } });
    fireEvent.change(within(dialog).getByRole('combobox', { name: 'Method' }), { target: { value: 'equals' } });
    fireEvent.change(within(dialog).getByRole('textbox', { name: 'Value' }), { target: { value: 'push' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create' }));
    expect(await within(dialog).findByTestId('save-error')).toHaveTextContent(refusal);
    expect(screen.getByRole('dialog', { name: 'New Matcher' })).toBeInTheDocument(); // still open, nothing lost
    expect(api.writes()).toHaveLength(1);
  });

  it('shows the server’s refusal in the extracted value form too', async () => {
    const refusal = 'you need the updateProject permission in this project';
    renderDetail(0, { 'PUT /project/1/integrations/5/values/12': [403, { error: refusal }] });
    fireEvent.click(await screen.findByRole('button', { name: 'Edit Event' }));
    const dialog = await screen.findByRole('dialog', { name: 'Edit Extracted Value' });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(await within(dialog).findByTestId('save-error')).toHaveTextContent(refusal);
  });

  it('says the integration could not be loaded, with the server’s reason', async () => {
    renderDetail(15, { 'GET /project/1/integrations/5': [404, { error: 'integration not found' }] });
    expect(await screen.findByText('The integration could not be loaded')).toBeInTheDocument();
    expect(screen.getByText('integration not found')).toBeInTheDocument();
  });
});

describe('the extracted value dialog (spec §5)', () => {
  async function openNew(routes: Record<string, Answer> = {}) {
    const api = renderDetail(15, { 'POST /project/1/integrations/5/values': [201, refValue], ...routes });
    fireEvent.click(await screen.findByRole('button', { name: 'New Extracted Value' }));
    return { api, dialog: await screen.findByRole('dialog', { name: 'New Extracted Value' }) };
  }

  it('is at most 450 pixels wide and shows every required message, making no call', async () => {
    const { api, dialog } = await openNew();
    expect(dialog).toHaveStyle({ maxWidth: '450px' });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create' }));
    for (const message of ['Name is required', 'Value source is required', 'Key is required', 'Variable is required']) {
      expect(await within(dialog).findByText(message)).toBeInTheDocument();
    }
    expect(within(dialog).queryByText('Body data type is required')).not.toBeInTheDocument();
    expect(api.writes()).toEqual([]);
  });

  it('asks for the body data type only when the source is the body', async () => {
    const { dialog } = await openNew();
    const source = within(dialog).getByRole('combobox', { name: 'Value source' });
    fireEvent.change(source, { target: { value: 'body' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create' }));
    expect(await within(dialog).findByText('Body data type is required')).toBeInTheDocument();
    fireEvent.change(source, { target: { value: 'header' } });
    expect(within(dialog).queryByRole('combobox', { name: 'Body data type' })).not.toBeInTheDocument();
    expect(within(dialog).queryByText('Body data type is required')).not.toBeInTheDocument();
  });

  it('posts the value with its integration_id', async () => {
    const { api, dialog } = await openNew();
    fireEvent.change(within(dialog).getByRole('textbox', { name: 'Name' }), { target: { value: 'Ref' } });
    fireEvent.change(within(dialog).getByRole('combobox', { name: 'Value source' }), { target: { value: 'body' } });
    fireEvent.change(within(dialog).getByRole('combobox', { name: 'Body data type' }), { target: { value: 'json' } });
    fireEvent.change(within(dialog).getByRole('textbox', { name: 'Key' }), { target: { value: 'ref' } });
    fireEvent.change(within(dialog).getByRole('textbox', { name: 'Environment variable' }), { target: { value: 'GIT_REF' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create' }));
    await waitFor(() =>
      expect(api.writes()).toEqual([
        {
          method: 'POST',
          path: '/project/1/integrations/5/values',
          body: { name: 'Ref', value_source: 'body', body_data_type: 'json', key: 'ref', variable: 'GIT_REF', integration_id: 5 },
        },
      ]),
    );
  });

  it('edits a header value with a PUT and no body data type', async () => {
    const api = renderDetail(15, { 'PUT /project/1/integrations/5/values/12': [204] });
    fireEvent.click(await screen.findByRole('button', { name: 'Edit Event' }));
    const dialog = await screen.findByRole('dialog', { name: 'Edit Extracted Value' });
    fireEvent.change(within(dialog).getByRole('textbox', { name: 'Environment variable' }), { target: { value: 'GH_EVENT' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() =>
      expect(api.writes()).toEqual([
        {
          method: 'PUT',
          path: '/project/1/integrations/5/values/12',
          body: { id: 12, name: 'Event', value_source: 'header', body_data_type: '', key: 'X-Event', variable: 'GH_EVENT', integration_id: 5 },
        },
      ]),
    );
  });

  it('deletes a value after asking', async () => {
    const api = renderDetail(15, { 'DELETE /project/1/integrations/5/values/11': [204] });
    fireEvent.click(await screen.findByRole('button', { name: 'Delete Ref' }));
    const dialog = await screen.findByRole('dialog');
    expect(dialog).toHaveTextContent('Are you sure you want to delete the extracted value Ref?');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(api.writes()).toEqual([{ method: 'DELETE', path: '/project/1/integrations/5/values/11', body: undefined }]));
  });
});

describe('the matcher dialog (spec §5)', () => {
  async function openNew(routes: Record<string, Answer> = {}) {
    const api = renderDetail(15, { 'POST /project/1/integrations/5/matchers': [201, mainMatcher], ...routes });
    fireEvent.click(await screen.findByRole('button', { name: 'New Matcher' }));
    return { api, dialog: await screen.findByRole('dialog', { name: 'New Matcher' }) };
  }

  it('is at most 450 pixels wide and shows every required message, making no call', async () => {
    const { api, dialog } = await openNew();
    expect(dialog).toHaveStyle({ maxWidth: '450px' });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create' }));
    for (const message of ['Name is required', 'Match type is required', 'Key is required', 'Method is required', 'Value is required']) {
      expect(await within(dialog).findByText(message)).toBeInTheDocument();
    }
    expect(api.writes()).toEqual([]);
  });

  it('asks for the body data type only when matching on the body', async () => {
    const { dialog } = await openNew();
    const type = within(dialog).getByRole('combobox', { name: 'Match type' });
    fireEvent.change(type, { target: { value: 'body' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create' }));
    expect(await within(dialog).findByText('Body data type is required')).toBeInTheDocument();
    fireEvent.change(type, { target: { value: 'header' } });
    expect(within(dialog).queryByText('Body data type is required')).not.toBeInTheDocument();
  });

  it('posts the matcher with its integration_id, and shows a server refusal in the form', async () => {
    const { api, dialog } = await openNew({ 'POST /project/1/integrations/5/matchers': [400, { error: 'Value is required' }] });
    fireEvent.change(within(dialog).getByRole('textbox', { name: 'Name' }), { target: { value: 'Push event' } });
    fireEvent.change(within(dialog).getByRole('combobox', { name: 'Match type' }), { target: { value: 'header' } });
    fireEvent.change(within(dialog).getByRole('textbox', { name: 'Key' }), { target: { value: 'X-Event' } });
    fireEvent.change(within(dialog).getByRole('combobox', { name: 'Method' }), { target: { value: 'contains' } });
    fireEvent.change(within(dialog).getByRole('textbox', { name: 'Value' }), { target: { value: 'push' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create' }));
    await waitFor(() =>
      expect(api.writes()).toEqual([
        {
          method: 'POST',
          path: '/project/1/integrations/5/matchers',
          body: { name: 'Push event', match_type: 'header', body_data_type: '', key: 'X-Event', method: 'contains', value: 'push', integration_id: 5 },
        },
      ]),
    );
    expect(await within(dialog).findByTestId('save-error')).toHaveTextContent('Value is required');
  });

  it('edits a matcher with a PUT carrying its id and integration_id', async () => {
    const api = renderDetail(15, { 'PUT /project/1/integrations/5/matchers/22': [204] });
    fireEvent.click(await screen.findByRole('button', { name: 'Edit Push event' }));
    const dialog = await screen.findByRole('dialog', { name: 'Edit Matcher' });
    fireEvent.change(within(dialog).getByRole('textbox', { name: 'Value' }), { target: { value: 'release' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() =>
      expect(api.writes()).toEqual([
        {
          method: 'PUT',
          path: '/project/1/integrations/5/matchers/22',
          body: { id: 22, name: 'Push event', match_type: 'header', body_data_type: '', key: 'X-Event', method: 'contains', value: 'release', integration_id: 5 },
        },
      ]),
    );
  });

  it('deletes a matcher after asking', async () => {
    const api = renderDetail(15, { 'DELETE /project/1/integrations/5/matchers/21': [204] });
    fireEvent.click(await screen.findByRole('button', { name: 'Delete Main branch' }));
    const dialog = await screen.findByRole('dialog');
    expect(dialog).toHaveTextContent('Are you sure you want to delete the matcher Main branch?');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(api.writes()).toEqual([{ method: 'DELETE', path: '/project/1/integrations/5/matchers/21', body: undefined }]));
  });
});
