// Snackbars (docs/features.md §8, §9): a toast in the corner that closes itself after
// 3 seconds; red for errors, green for successes.
import { createContext, useCallback, useContext, useMemo, useRef, useState, type ReactNode } from 'react';
import { Alert, AlertActionCloseButton, AlertGroup } from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../api/errors';

export const SNACKBAR_TIMEOUT_MS = 3000;

interface Snackbar {
  key: number;
  variant: 'success' | 'danger';
  title: string;
}

interface Notify {
  /** A green snackbar with an already translated text. */
  success(title: string): void;
  /** A red snackbar with the message of a failed call (docs/features.md §8). */
  error(error: unknown): void;
}

const NotifyContext = createContext<Notify | null>(null);

export function NotificationsProvider({ children }: { children: ReactNode }) {
  const { t } = useTranslation();
  const [snackbars, setSnackbars] = useState<Snackbar[]>([]);
  const nextKey = useRef(0);

  const close = useCallback((key: number) => {
    setSnackbars((all) => all.filter((s) => s.key !== key));
  }, []);
  const show = useCallback((variant: Snackbar['variant'], title: string) => {
    const key = nextKey.current++;
    setSnackbars((all) => [...all, { key, variant, title }]);
  }, []);
  const notify = useMemo<Notify>(
    () => ({
      success: (title) => show('success', title),
      error: (error) => show('danger', errorMessage(error)),
    }),
    [show],
  );

  return (
    <NotifyContext.Provider value={notify}>
      {children}
      <AlertGroup isToast isLiveRegion>
        {snackbars.map(({ key, variant, title }) => (
          <Alert
            key={key}
            variant={variant}
            title={title}
            timeout={SNACKBAR_TIMEOUT_MS}
            onTimeout={() => close(key)}
            actionClose={<AlertActionCloseButton title={t('Close')} onClose={() => close(key)} />}
          />
        ))}
      </AlertGroup>
    </NotifyContext.Provider>
  );
}

export function useNotify(): Notify {
  const notify = useContext(NotifyContext);
  if (!notify) throw new Error('useNotify needs a NotificationsProvider');
  return notify;
}
