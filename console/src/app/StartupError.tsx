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
import { useNavigate } from 'react-router-dom';

/** Shown when the console cannot load what it needs to start. */
export function StartupError({ message }: { message: string }) {
  const { t } = useTranslation();
  const navigate = useNavigate();

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
            <Button variant="secondary" onClick={() => navigate('/auth/login')}>
              {t('Re-login')}
            </Button>
          </EmptyStateActions>
        </EmptyStateFooter>
      </EmptyState>
    </Bullseye>
  );
}
