import { EmptyState, EmptyStateBody, PageSection } from '@patternfly/react-core';
import CubesIcon from '@patternfly/react-icons/dist/esm/icons/cubes-icon';
import { useTranslation } from 'react-i18next';

/**
 * The project resource screens (history, templates, inventory…) come with
 * the console's second part; until then their routes lead here,
 * so the drawer's links are real links that say what is coming.
 */
export function LaterScreen({ title }: { title?: string }) {
  const { t } = useTranslation();
  return (
    <PageSection>
      <EmptyState headingLevel="h1" titleText={title ?? t('Not available yet')} icon={CubesIcon}>
        <EmptyStateBody>{t('This screen arrives with a later version of the console.')}</EmptyStateBody>
      </EmptyState>
    </PageSection>
  );
}
