import type { ReactElement } from 'react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render } from '@testing-library/react';
import { MemoryRouter, Route, Routes, useLocation } from 'react-router-dom';
import { NotificationsProvider } from '../app/Notifications';
import { SessionContext } from '../app/SessionContext';
import type { User } from '../resources/users/types';
import { admin } from './fixtures';

export function LocationProbe() {
  const { pathname, search } = useLocation();
  return <div data-testid="location">{pathname + search}</div>;
}

interface Options {
  path?: string;
  /** The route pattern the element is mounted under, e.g. /project/:projectId/*. */
  route?: string;
  user?: User | null;
}

/** Renders with the providers the console has once started (no retries). */
export function renderWithProviders(ui: ReactElement, { path = '/', route = '*', user = admin }: Options = {}) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false }, mutations: { retry: false } } });
  const element = user ? (
    <SessionContext.Provider value={{ user, info: { version: '1.2.3' } }}>{ui}</SessionContext.Provider>
  ) : (
    ui
  );
  return {
    client,
    ...render(
      <QueryClientProvider client={client}>
        <NotificationsProvider>
          <MemoryRouter initialEntries={[path]}>
            <Routes>
              <Route path={route} element={element} />
            </Routes>
            <LocationProbe />
          </MemoryRouter>
        </NotificationsProvider>
      </QueryClientProvider>,
    ),
  };
}
