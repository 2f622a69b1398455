import { fireEvent, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { stubApi } from '../../../test/api';
import { alice, project } from '../../../test/fixtures';
import { inProject } from '../../../test/project';
import { renderWithProviders } from '../../../test/render';
import { ActivityPage } from '../ActivityPage';

describe('the activity screen (spec §2, §9)', () => {
  it("shows an event's date as relative time, and a dash for an empty value", async () => {
    const created = new Date(Date.now() - 5 * 60 * 1000).toISOString();
    stubApi({
      'GET /project/1/events/last': [200, [
        { created, username: 'alice', description: 'Template deploy created', object_type: 'template', object_id: 1 },
        { created: '', username: '', description: 'Something happened', object_type: 'task', object_id: 2 },
      ]],
    });
    renderWithProviders(inProject(<ActivityPage />, project(1, 'Infra'), alice, 'owner', 15), { path: '/project/1/activity' });
    const first = (await screen.findByText('Template deploy created')).closest('tr')!;
    expect(within(first).getByText('5 minutes ago').tagName).toBe('TIME');
    const second = screen.getByText('Something happened').closest('tr')!;
    expect(within(second).getAllByText('—')).toHaveLength(2);
  });

  it('pages the events at 20 rows', async () => {
    const created = new Date().toISOString();
    const events = Array.from({ length: 25 }, (_, i) => ({
      created, username: 'alice', description: `Event ${i + 1}`, object_type: 'task', object_id: i,
    }));
    stubApi({ 'GET /project/1/events/last': [200, events] });
    renderWithProviders(inProject(<ActivityPage />, project(1, 'Infra'), alice, 'owner', 15), { path: '/project/1/activity' });
    await screen.findByText('Event 1');
    expect(screen.getAllByRole('row')).toHaveLength(1 + 20);
    expect(screen.queryByText('Event 21')).not.toBeInTheDocument();
    fireEvent.click(screen.getAllByRole('button', { name: /next page/i })[0]);
    expect(await screen.findByText('Event 21')).toBeInTheDocument();
    expect(screen.getAllByRole('row')).toHaveLength(1 + 5);
  });

  it('says so when nothing has happened yet', async () => {
    stubApi({ 'GET /project/1/events/last': [200, []] });
    renderWithProviders(inProject(<ActivityPage />, project(1, 'Infra'), alice, 'owner', 15), { path: '/project/1/activity' });
    expect(await screen.findByText('No activity yet')).toBeInTheDocument();
  });
});
