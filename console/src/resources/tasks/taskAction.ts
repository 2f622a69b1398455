import { useCallback } from 'react';
import { useTranslation } from 'react-i18next';
import type { TemplateType } from '../templates/types';

/**
 * The action that starts a template's task (docs/features.md §2): Run for a task, Build
 * for a build, Deploy for a deploy; a re-run takes the "Re" prefix
 * (Re-run, Rebuild, Redeploy). Returns a function of the template type.
 */
export function useTaskAction() {
  const { t } = useTranslation('tasks');
  return useCallback(
    (type: TemplateType | undefined, rerun = false): string => {
      switch (type) {
        case 'build':
          return rerun ? t('Rebuild') : t('Build');
        case 'deploy':
          return rerun ? t('Redeploy') : t('Deploy');
        default:
          return rerun ? t('Re-run') : t('Run');
      }
    },
    [t],
  );
}
