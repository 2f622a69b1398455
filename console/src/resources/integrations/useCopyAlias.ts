import { useTranslation } from 'react-i18next';
import { useNotify } from '../../app/Notifications';
import { copyText } from './clipboard';

/** Copies an alias URL and says how it went in a snackbar (docs/features.md §8). */
export function useCopyAlias() {
  const { t } = useTranslation('integrations');
  const notify = useNotify();
  return async (url: string) => {
    const result = await copyText(url);
    if (result.ok) {
      notify.success(t('The alias URL has been copied to the clipboard.'));
      return;
    }
    const reason = result.reason || t('the browser offers no clipboard on this page');
    notify.error(new Error(t("Can't copy to clipboard: {{reason}}", { reason })));
  };
}
