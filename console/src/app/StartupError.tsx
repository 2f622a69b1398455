import {
  Bullseye,
  Button,
  EmptyState,
  EmptyStateActions,
  EmptyStateBody,
  EmptyStateFooter,
} from '@patternfly/react-core';
import ExclamationCircleIcon from '@patternfly/react-icons/dist/esm/icons/exclamation-circle-icon';
import { useTranslation } from 'react-i18next';
import { signOut } from './session';

/** Shown when the console cannot load what it needs to start (docs/features.md §2, §8). */
export function StartupError({ message }: { message: string }) {
  const { t } = useTranslation();

  return (
    <Bullseye style={{ minHeight: '100vh' }}>
      <EmptyState
        headingLevel="h1"
        titleText={t('The console could not start')}
        icon={ExclamationCircleIcon}
        status="danger"
      >
        <EmptyStateBody>{message}</EmptyStateBody>
        <EmptyStateFooter>
          <EmptyStateActions>
            <Button variant="primary" onClick={() => window.location.reload()}>
              {t('Refresh page')}
            </Button>
            {/* Signs out first: with the session cookie, sign-in would send the user back here. */}
            <Button variant="secondary" onClick={() => void signOut()}>
              {t('Re-login')}
            </Button>
          </EmptyStateActions>
        </EmptyStateFooter>
      </EmptyState>
    </Bullseye>
  );
}
