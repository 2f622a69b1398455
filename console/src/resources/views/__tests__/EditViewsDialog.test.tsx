import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { stubApi } from '../../../test/api';
import { renderWithProviders } from '../../../test/render';
import { EditViewsDialog } from '../EditViewsDialog';

const views = [
  { id: 3, project_id: 1, title: 'Dev', position: 0 },
  { id: 5, project_id: 1, title: 'Prod', position: 1 },
];

describe('the edit-views dialog', () => {
  it('does not save a view without a title, and makes no call', async () => {
    const api = stubApi({});
    renderWithProviders(<EditViewsDialog projectId={1} views={views} onClose={() => {}} />);
    const dialog = await screen.findByRole('dialog');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Add view' }));
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(await within(dialog).findByText('Title is required')).toBeInTheDocument();
    expect(api.writes()).toEqual([]);
  });

  it('creates, renames, deletes and repositions the views on Save', async () => {
    const api = stubApi({
      'DELETE /project/1/views/3': [204],
      'POST /project/1/views': (body) => [201, { id: 9, project_id: 1, ...(body as object) }],
      'PUT /project/1/views/5': [204],
      'POST /project/1/views/positions': [204],
      'GET /project/1/views': [200, []],
    });
    let closed = false;
    renderWithProviders(<EditViewsDialog projectId={1} views={views} onClose={() => (closed = true)} />);
    const dialog = await screen.findByRole('dialog');
    fireEvent.change(within(dialog).getByRole('textbox', { name: 'Title of view 2' }), { target: { value: 'Production' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Delete view 1' }));
    fireEvent.click(within(dialog).getByRole('button', { name: 'Add view' }));
    fireEvent.change(within(dialog).getByRole('textbox', { name: 'Title of view 2' }), { target: { value: 'Staging' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Move view 2 up' }));
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(closed).toBe(true));
    expect(api.writes()).toEqual([
      { method: 'DELETE', path: '/project/1/views/3', body: undefined },
      { method: 'PUT', path: '/project/1/views/5', body: { id: 5, title: 'Production', position: 1 } },
      { method: 'POST', path: '/project/1/views', body: { title: 'Staging', position: 0 } },
      { method: 'POST', path: '/project/1/views/positions', body: { '9': 0, '5': 1 } },
    ]);
  });

  it('reorders by dragging a view onto another', async () => {
    const api = stubApi({ 'POST /project/1/views/positions': [204], 'GET /project/1/views': [200, []] });
    renderWithProviders(<EditViewsDialog projectId={1} views={views} onClose={() => {}} />);
    const dialog = await screen.findByRole('dialog');
    const items = within(dialog).getAllByTestId('view-item');
    const handle = within(items[1]).getByTestId('view-drag-handle');
    const dataTransfer = { setData: () => {}, effectAllowed: '' };
    fireEvent.dragStart(handle, { dataTransfer });
    fireEvent.dragOver(items[0], { dataTransfer });
    fireEvent.drop(items[0], { dataTransfer });
    expect(within(dialog).getByRole('textbox', { name: 'Title of view 1' })).toHaveValue('Prod');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() =>
      expect(api.writes()).toEqual([{ method: 'POST', path: '/project/1/views/positions', body: { '5': 0, '3': 1 } }]),
    );
  });
});
