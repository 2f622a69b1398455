import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { stubApi } from '../../../test/api';
import { alice } from '../../../test/fixtures';
import { renderWithProviders } from '../../../test/render';
import { AccountDialog } from '../AccountDialog';

describe('edit account (spec §2)', () => {
  it("edits the signed-in user's own row, without the admin checkbox for a non-admin", async () => {
    const api = stubApi({ 'PUT /users/2': [204], 'GET /user': [200, alice] });
    renderWithProviders(<AccountDialog onClose={() => {}} />, { user: alice });
    const dialog = await screen.findByRole('dialog', { name: 'Edit account' });
    expect(within(dialog).getByLabelText(/^Name/)).toHaveValue('Alice Liddell');
    expect(within(dialog).queryByLabelText('Admin user')).not.toBeInTheDocument();
    // The alert switch says what will be sent.
    expect(within(dialog).getByText(/Alerts go by email to this address when a task fails/)).toHaveTextContent(
      'who started the task, when, how long it ran, its message, the last 20 lines of output and a link to the task',
    );

    fireEvent.change(within(dialog).getByLabelText(/^Name/), { target: { value: '' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(await within(dialog).findByText('Name is required')).toBeInTheDocument();
    expect(api.writes()).toEqual([]);

    fireEvent.change(within(dialog).getByLabelText(/^Name/), { target: { value: 'Alice Kingsleigh' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() =>
      expect(api.writes()).toEqual([
        {
          method: 'PUT',
          path: '/users/2',
          // admin and can_create_project go back as they were: only admins change them.
          body: { id: 2, name: 'Alice Kingsleigh', username: 'alice', email: 'alice@example.com', alert: true, admin: false, can_create_project: true },
        },
      ]),
    );
    expect(await screen.findByText('User alice saved')).toBeInTheDocument();
  });
});
