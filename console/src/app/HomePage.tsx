import {
  Content,
  DescriptionList,
  DescriptionListDescription,
  DescriptionListGroup,
  DescriptionListTerm,
  PageSection,
  Title,
} from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';
import { useLocation } from 'react-router-dom';
import { PRODUCT_NAME } from './brand';

/** Landing page; it also shows the route so deep links are visibly handled. */
export function HomePage() {
  const { t } = useTranslation();
  const { pathname } = useLocation();

  return (
    <PageSection>
      <Title headingLevel="h1">{PRODUCT_NAME}</Title>
      <Content component="p">{t('Kubernetes-native automation console')}</Content>
      <DescriptionList isHorizontal isCompact>
        <DescriptionListGroup>
          <DescriptionListTerm>{t('Current page')}</DescriptionListTerm>
          <DescriptionListDescription>
            <code data-testid="current-path">{pathname}</code>
          </DescriptionListDescription>
        </DescriptionListGroup>
      </DescriptionList>
    </PageSection>
  );
}
