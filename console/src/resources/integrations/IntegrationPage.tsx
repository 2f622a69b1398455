import { Suspense, useState } from 'react';
import {
  Breadcrumb,
  BreadcrumbItem,
  Bullseye,
  Button,
  Checkbox,
  EmptyState,
  EmptyStateBody,
  Flex,
  PageSection,
  Spinner,
  Title,
} from '@patternfly/react-core';
import './integrations.css';
import ExclamationCircleIcon from '@patternfly/react-icons/dist/esm/icons/exclamation-circle-icon';
import { useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router-dom';
import { errorMessage } from '../../api/errors';
import { Loading } from '../../app/lazyPages';
import { useNotify } from '../../app/Notifications';
import { Permission, useProjectAccess } from '../../app/permissions';
import { LazyManaged } from '../../components/lazyDialogs';
import { AliasList } from './AliasList';
import { ExtractValuesSection, MatchersSection } from './IntegrationItems';
import { IntegrationDialog } from './lazyDialogs';
import type { Integration } from './types';
import { useIntegration, useSaveIntegration } from './useIntegrations';

/** /project/{id}/integration/{integrationId} (docs/features.md §2). */
export function IntegrationPage() {
  const { t } = useTranslation('integrations');
  const { project } = useProjectAccess();
  const integrationId = Number(useParams().integrationId);
  const integration = useIntegration(project.id, integrationId);
  const listPath = `/project/${project.id}/integrations`;

  return (
    <PageSection>
      <Breadcrumb className="bastion-integrations__heading">
        <BreadcrumbItem render={({ className }) => <Link className={className} to={listPath}>{t('Integrations')}</Link>} />
        <BreadcrumbItem isActive>{integration.data?.name ?? `#${integrationId}`}</BreadcrumbItem>
      </Breadcrumb>
      {integration.isPending && (
        <Bullseye>
          <Spinner aria-label={t('Loading')} />
        </Bullseye>
      )}
      {integration.isError && (
        <EmptyState headingLevel="h1" titleText={t('The integration could not be loaded')} icon={ExclamationCircleIcon} status="danger">
          <EmptyStateBody>{errorMessage(integration.error)}</EmptyStateBody>
        </EmptyState>
      )}
      {integration.data && <IntegrationDetail integration={integration.data} />}
    </PageSection>
  );
}

/**
 * One integration. When a GitOps tool manages it (docs/gitops.md) a notice
 * says so and nothing here writes it: no Edit, the checkbox disabled, and
 * its aliases, matchers and values read-only, as the API refuses them.
 */
function IntegrationDetail({ integration }: { integration: Integration }) {
  const { t } = useTranslation('integrations');
  const { can } = useProjectAccess();
  const by = integration.managed_by;
  const manage = can(Permission.updateProject);
  const [editing, setEditing] = useState(false);
  return (
    <>
      <Flex justifyContent={{ default: 'justifyContentSpaceBetween' }} alignItems={{ default: 'alignItemsCenter' }}>
        <Title headingLevel="h1">{integration.name}</Title>
        {manage && !by && (
          <Button variant="secondary" onClick={() => setEditing(true)}>
            {t('Edit')}
          </Button>
        )}
      </Flex>
      {by && (
        <Suspense fallback={null}>
          <LazyManaged by={by} part="notice" />
        </Suspense>
      )}
      <div className="bastion-integrations__section">
        <AliasList integrationId={integration.id} managedBy={by} />
        <SearchableCheckbox integration={integration} />
      </div>
      <ExtractValuesSection integrationId={integration.id} managedBy={by} />
      <MatchersSection integrationId={integration.id} managedBy={by} />
      <Loading>{editing && <IntegrationDialog integration={integration} onClose={() => setEditing(false)} />}</Loading>
    </>
  );
}

/** Saves at once (docs/features.md §2): the integration, with searchable flipped. */
function SearchableCheckbox({ integration }: { integration: Integration }) {
  const { t } = useTranslation('integrations');
  const { project, can } = useProjectAccess();
  const notify = useNotify();
  const save = useSaveIntegration(project.id);
  return (
    <Checkbox
      id="integration-searchable"
      className="bastion-integrations__searchable"
      label={t('Available by project and global alias')}
      description={t('Requests to the project aliases on the Integrations page reach this integration too.')}
      isChecked={save.isPending ? save.variables.searchable : integration.searchable}
      isDisabled={!can(Permission.updateProject) || !!integration.managed_by || save.isPending}
      onChange={(_event, searchable) => save.mutate({ ...integration, searchable }, { onError: notify.error })}
    />
  );
}
