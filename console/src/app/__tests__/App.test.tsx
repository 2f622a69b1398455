import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { MemoryRouter } from 'react-router-dom';
import { describe, expect, it, vi } from 'vitest';
import { settingKeys } from '../../settings/settings';
import { setSessionCookie, stubApi } from '../../test/api';
import { admin, alice, project } from '../../test/fixtures';
import { LocationProbe } from '../../test/render';
import { App } from '../App';
import { hasSessionCookie } from '../session';

function renderApp(path = '/') {
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

const location = () => screen.getByTestId('location');
const signedIn = (projects = [project(1, 'Alpha'), project(2, 'Beta')], user = admin) => ({
  'GET /info': [200, { version: '1.2.3' }] as [number, unknown],
  'GET /user': [200, user] as [number, unknown],
  'GET /projects': [200, projects] as [number, unknown],
  'GET /project/1/role': [200, { role: 'owner', permissions: 15 }] as [number, unknown],
  'GET /project/2/role': [200, { role: 'guest', permissions: 0 }] as [number, unknown],
  'GET /auth/login': [200, { oidc_providers: [], login_with_password: true }] as [number, unknown],
});

describe('startup (spec §2, §4)', () => {
  it('sends a browser without a session cookie to sign in, keeping the query string', async () => {
    stubApi(signedIn());
    renderApp('/project/1/team?t=5');
    await waitFor(() => expect(location()).toHaveTextContent('/auth/login?t=5'));
  });

  it('shows a spinner while loading', async () => {
    setSessionCookie();
    vi.stubGlobal('fetch', vi.fn(() => new Promise<Response>(() => {})));
    renderApp('/project/1/history');
    expect(await screen.findByRole('progressbar', { name: 'Loading' })).toBeInTheDocument();
  });

  it('shows the error screen with Refresh page and Re-login when a startup call fails', async () => {
    setSessionCookie();
    stubApi({ ...signedIn(), 'GET /projects': [500, { error: 'etcd is down' }] });
    renderApp('/');
    expect(await screen.findByRole('heading', { name: 'The console could not start' })).toBeInTheDocument();
    expect(screen.getByText('etcd is down')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Refresh page' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Re-login' })).toBeInTheDocument();
  });

  it('Re-login signs out and goes to the sign-in screen', async () => {
    setSessionCookie();
    const api = stubApi({ ...signedIn(), 'GET /user': [500, { error: 'boom' }], 'POST /auth/logout': [204] });
    const assign = vi.fn();
    vi.stubGlobal('location', { ...window.location, assign });
    renderApp('/');
    fireEvent.click(await screen.findByRole('button', { name: 'Re-login' }));
    await waitFor(() => expect(assign).toHaveBeenCalledWith('/auth/login'));
    expect(api.writes()).toEqual([{ method: 'POST', path: '/auth/logout', body: {} }]);
    expect(hasSessionCookie()).toBe(false);
  });

  it('forgets a session the server no longer knows and goes to sign in', async () => {
    setSessionCookie();
    stubApi({ ...signedIn(), 'GET /user': [401, { error: 'not signed in' }] });
    renderApp('/project/1/history');
    await waitFor(() => expect(location()).toHaveTextContent('/auth/login'));
    expect(hasSessionCookie()).toBe(false);
  });

  it('sends a user with zero projects to /project/new', async () => {
    setSessionCookie();
    stubApi(signedIn([], alice));
    renderApp('/');
    await waitFor(() => expect(location()).toHaveTextContent('/project/new'));
    expect(await screen.findByRole('heading', { name: 'New project' })).toBeInTheDocument();
  });

  it('opens the remembered project from the base page', async () => {
    setSessionCookie();
    localStorage.setItem(settingKeys.lastProject, '2');
    stubApi(signedIn());
    renderApp('/');
    await waitFor(() => expect(location()).toHaveTextContent('/project/2/history'));
  });

  it('redirects /project/{id} to its history and remembers the project', async () => {
    setSessionCookie();
    stubApi(signedIn());
    renderApp('/project/2');
    await waitFor(() => expect(location()).toHaveTextContent('/project/2/history'));
    await waitFor(() => expect(localStorage.getItem(settingKeys.lastProject)).toBe('2'));
  });

  it('shows the read-only notice to a guest', async () => {
    setSessionCookie();
    stubApi(signedIn(undefined, { ...alice, admin: false }));
    renderApp('/project/2/history');
    expect(await screen.findByTestId('access-notice')).toHaveTextContent('You have read-only access');
    // A guest sees no Settings link.
    const nav = await screen.findByRole('navigation', { name: 'Project' });
    expect(within(nav).queryByRole('link', { name: 'Settings' })).not.toBeInTheDocument();
    expect(within(nav).getByRole('link', { name: 'Team' })).toBeInTheDocument();
  });
});
