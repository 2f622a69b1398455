import { act, fireEvent, render, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../api/client';
import { NotificationsProvider, SNACKBAR_TIMEOUT_MS, useNotify } from '../Notifications';

function Fail() {
  const notify = useNotify();
  return <button onClick={() => notify.error(new ApiError(400, 'Bad Request', 'Name is required'))}>fail</button>;
}

describe('snackbars (spec §8, §9)', () => {
  it("show the server's message in red for 3 seconds", () => {
    vi.useFakeTimers();
    render(
      <NotificationsProvider>
        <Fail />
      </NotificationsProvider>,
    );
    fireEvent.click(screen.getByRole('button', { name: 'fail' }));
    const alert = screen.getByText('Name is required').closest('.pf-v6-c-alert');
    expect(alert).toHaveClass('pf-m-danger');
    expect(SNACKBAR_TIMEOUT_MS).toBe(3000);

    act(() => vi.advanceTimersByTime(2900));
    expect(screen.getByText('Name is required')).toBeInTheDocument();
    act(() => vi.advanceTimersByTime(200));
    expect(screen.queryByText('Name is required')).not.toBeInTheDocument();
  });
});
