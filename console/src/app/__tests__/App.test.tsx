import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen } from '@testing-library/react';
import { MemoryRouter, useLocation } from 'react-router-dom';
import { describe, expect, it, vi } from 'vitest';
import { App } from '../App';

function LocationProbe() {
  return <div data-testid="location">{useLocation().pathname}</div>;
}

function renderApp(path = '/') {
  // No retries, so a failed call shows the error screen at once.
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <MemoryRouter initialEntries={[path]}>
        <App />
        <LocationProbe />
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

function stubFetch(response: () => Promise<Response>) {
  const fetchMock = vi.fn(response);
  vi.stubGlobal('fetch', fetchMock);
  return fetchMock;
}

const json = (status: number, body: unknown) =>
  Promise.resolve(new Response(JSON.stringify(body), { status }));

describe('App startup', () => {
  it('shows a spinner while /api/info loads', () => {
    const fetchMock = stubFetch(() => new Promise<Response>(() => {}));
    renderApp();

    expect(screen.getByRole('progressbar', { name: 'Loading' })).toBeInTheDocument();
    expect(fetchMock).toHaveBeenCalledWith('/api/info', expect.anything());
  });

  it('shows the server error with refresh and re-login buttons when /api/info fails', async () => {
    stubFetch(() => json(500, { error: 'boom' }));
    renderApp();

    expect(
      await screen.findByRole('heading', { name: 'The console could not start' }),
    ).toBeInTheDocument();
    expect(screen.getByText('boom')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Refresh page' })).toBeInTheDocument();

    fireEvent.click(screen.getByRole('button', { name: 'Re-login' }));
    expect(screen.getByTestId('location')).toHaveTextContent('/auth/login');
  });

  it('shows the shell with the server version once /api/info answers', async () => {
    stubFetch(() => json(200, { version: '0.1.0-dev' }));
    renderApp('/project/1/history');

    expect(await screen.findByTestId('app-version')).toHaveTextContent('v0.1.0-dev');
    expect(screen.getByRole('link', { name: 'Bastion' })).toHaveAttribute('href', '/');
    expect(screen.getByRole('heading', { name: 'Bastion' })).toBeInTheDocument();
    expect(screen.getByTestId('current-path')).toHaveTextContent('/project/1/history');
  });
});
