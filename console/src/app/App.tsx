import { Bullseye, Spinner } from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';
import { useInfo } from '../api/useInfo';
import { AppShell } from './AppShell';
import { StartupError } from './StartupError';

/** The console's startup states: loading, error, then the shell. */
export function App() {
  const { t } = useTranslation();
  const info = useInfo();

  if (info.isPending) {
    return (
      <Bullseye style={{ minHeight: '100vh' }}>
        <Spinner aria-label={t('Loading')} />
      </Bullseye>
    );
  }
  if (info.isError) {
    return <StartupError message={info.error.message} />;
  }
  return <AppShell version={info.data.version} />;
}
