import { useTranslation } from 'react-i18next';
import { LaterScreen } from '../../app/LaterScreen';

// Placeholder: replaced by the console's part 2 (issue 8).
export function HistoryPage() {
  const { t } = useTranslation();
  return <LaterScreen title={t('History')} />;
}
