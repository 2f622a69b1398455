import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { stubApi } from '../../test/api';
import { admin, project } from '../../test/fixtures';
import { inProject } from '../../test/project';
import { renderWithProviders } from '../../test/render';
import { DeleteResourceDialog } from '../DeleteResourceDialog';
import { blockingReferences, isBlocked, type References } from '../references';

const none = { templates: [], inventories: [], repositories: [], schedules: [], integrations: [] };
const used = {
  templates: [{ id: 4, name: 'Deploy site' }],
  inventories: [{ id: 2, name: 'production' }],
  repositories: [{ id: 3, name: 'site' }],
  schedules: [{ id: 9, name: '0 0 * * *' }],
  integrations: [{ id: 5, name: 'GitHub push' }],
};

function renderDialog(kind = 'repository') {
  const onDeleted = vi.fn();
  const onClose = vi.fn();
  renderWithProviders(
    inProject(
      <DeleteResourceDialog kind={kind} name="site" path="/project/1/repositories/3" onDeleted={onDeleted} onClose={onClose} />,
      project(1, 'Infra'),
      admin,
      'owner',
      15,
    ),
  );
  return { onDeleted, onClose };
}

describe('references that block a delete', () => {
  it('are templates, inventories, repositories and integrations; schedules only for a repository', () => {
    const onlySchedules = { ...none, schedules: [{ id: 1, name: 'nightly' }] };
    expect(isBlocked('repository', onlySchedules)).toBe(true);
    expect(isBlocked('template', onlySchedules)).toBe(false);
    expect(isBlocked('key', none)).toBe(false);
    expect(Object.keys(blockingReferences('key', used))).toEqual(['templates', 'inventories', 'repositories', 'integrations']);
  });
});

describe('the delete dialog (spec §4, §8)', () => {
  it('asks for the references first, then confirms and deletes an unused object', async () => {
    const api = stubApi({ 'GET /project/1/repositories/3/refs': [200, none], 'DELETE /project/1/repositories/3': [204] });
    const { onDeleted, onClose } = renderDialog();
    const dialog = await screen.findByRole('dialog', { name: /Delete repository/ });
    expect(within(dialog).getByText('Are you sure you want to delete the repository "site"?')).toBeInTheDocument();
    expect(api.calls[0]).toMatchObject({ method: 'GET', path: '/project/1/repositories/3/refs' });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(onDeleted).toHaveBeenCalled());
    expect(onClose).toHaveBeenCalled();
    expect(api.writes()).toEqual([{ method: 'DELETE', path: '/project/1/repositories/3', body: undefined }]);
  });

  it('lists the referencing resources with links instead, and deletes nothing', async () => {
    const api = stubApi({ 'GET /project/1/repositories/3/refs': [200, used] });
    renderDialog();
    const dialog = await screen.findByRole('dialog', { name: /Can't delete the repository/ });
    expect(within(dialog).getByRole('link', { name: 'Deploy site' })).toHaveAttribute('href', '/project/1/templates/4');
    expect(within(dialog).getByRole('link', { name: 'production' })).toHaveAttribute('href', '/project/1/inventory');
    expect(within(dialog).getByRole('link', { name: 'site' })).toHaveAttribute('href', '/project/1/repositories');
    expect(within(dialog).getByRole('link', { name: 'GitHub push' })).toHaveAttribute('href', '/project/1/integration/5');
    expect(within(dialog).getByText('0 0 * * *')).toBeInTheDocument();
    expect(within(dialog).queryByRole('button', { name: 'Delete' })).not.toBeInTheDocument();
    expect(api.writes()).toEqual([]);
  });

  it("names the kind in the title: Can't delete the template", async () => {
    stubApi({ 'GET /project/1/repositories/3/refs': [200, { ...none, integrations: [{ id: 5, name: 'hook' }] }] });
    renderDialog('template');
    expect(await screen.findByRole('dialog', { name: /Can't delete the template/ })).toBeInTheDocument();
  });

  it('shows the same dialog when the server answers 400 inUse to the delete', async () => {
    let refs: References = none;
    stubApi({
      'GET /project/1/repositories/3/refs': () => [200, refs],
      'DELETE /project/1/repositories/3': () => {
        refs = used; // a template took the repository meanwhile
        return [400, { error: 'The repository site is in use by other resources; see its references', inUse: true }];
      },
    });
    const { onDeleted } = renderDialog();
    fireEvent.click(await screen.findByRole('button', { name: 'Delete' }));
    const dialog = await screen.findByRole('dialog', { name: /Can't delete the repository/ });
    expect(within(dialog).getByRole('link', { name: 'Deploy site' })).toBeInTheDocument();
    expect(onDeleted).not.toHaveBeenCalled();
  });

  it('closes with a red snackbar when the delete fails otherwise', async () => {
    stubApi({ 'GET /project/1/repositories/3/refs': [200, none], 'DELETE /project/1/repositories/3': [403, { error: 'permission denied' }] });
    const { onClose, onDeleted } = renderDialog();
    fireEvent.click(await screen.findByRole('button', { name: 'Delete' }));
    expect(await screen.findByText('permission denied')).toBeInTheDocument();
    expect(onClose).toHaveBeenCalled();
    expect(onDeleted).not.toHaveBeenCalled();
  });
});
