import '@patternfly/react-core/dist/styles/base.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { BrowserRouter } from 'react-router-dom';
import { App } from './app/App';
import { initI18n } from './i18n';
import { applyStoredDarkMode } from './settings/darkMode';

// Before the first render, so the page never flashes the wrong theme.
applyStoredDarkMode();

const queryClient = new QueryClient({
  defaultOptions: {
    // One retry absorbs a blip; more would keep the startup spinner up for long.
    queries: { retry: 1, refetchOnWindowFocus: false },
  },
});

// The stored language's catalogs load first, so no English flashes by.
void initI18n().finally(() => {
  createRoot(document.getElementById('root')!).render(
    <StrictMode>
      <QueryClientProvider client={queryClient}>
        <BrowserRouter>
          <App />
        </BrowserRouter>
      </QueryClientProvider>
    </StrictMode>,
  );
});
