import { useState } from 'react';
import { Bullseye, Button, EmptyState, EmptyStateBody, Flex, PageSection, Spinner, Title } from '@patternfly/react-core';
import './integrations.css';
import ExclamationCircleIcon from '@patternfly/react-icons/dist/esm/icons/exclamation-circle-icon';
import PluggedIcon from '@patternfly/react-icons/dist/esm/icons/plugged-icon';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router-dom';
import { errorMessage } from '../../api/errors';
import { Loading } from '../../app/lazyPages';
import { Permission, useProjectAccess } from '../../app/permissions';
import { ManagedName, RowActions } from '../../components/RowActions';
import { AliasList } from './AliasList';
import { DeleteIntegrationDialog } from './DeleteIntegrationDialog';
import { IntegrationDialog } from './lazyDialogs';
import type { Integration } from './types';
import { useIntegrations, useTemplateChoices } from './useIntegrations';

/** /project/{id}/integrations (docs/features.md §2): the project's aliases and every integration, no paging. */
export function IntegrationsPage() {
  const { t } = useTranslation('integrations');
  const { project, can } = useProjectAccess();
  const integrations = useIntegrations(project.id);
  const templates = useTemplateChoices(project.id);
  const manage = can(Permission.updateProject);
  // undefined: closed; null: a new integration.
  const [editing, setEditing] = useState<Integration | null | undefined>(undefined);
  const [deleting, setDeleting] = useState<Integration | null>(null);
  const templateName = (id: number | null) => templates.data?.find((tpl) => tpl.id === id)?.name ?? `#${id}`;

  return (
    <PageSection>
      <Flex justifyContent={{ default: 'justifyContentSpaceBetween' }} alignItems={{ default: 'alignItemsCenter' }}>
        <Title headingLevel="h1">{t('Integrations')}</Title>
        {manage && (
          <Button variant="primary" onClick={() => setEditing(null)}>
            {t('New Integration')}
          </Button>
        )}
      </Flex>
      <div className="bastion-integrations__section">
        <AliasList />
      </div>
      <div className="bastion-integrations__section">
        {integrations.isPending && (
          <Bullseye>
            <Spinner aria-label={t('Loading')} />
          </Bullseye>
        )}
        {integrations.isError && (
          <EmptyState headingLevel="h2" titleText={t('The integrations could not be loaded')} icon={ExclamationCircleIcon} status="danger">
            <EmptyStateBody>{errorMessage(integrations.error)}</EmptyStateBody>
          </EmptyState>
        )}
        {integrations.data?.length === 0 && (
          <EmptyState headingLevel="h2" titleText={t('No integrations yet')} icon={PluggedIcon}>
            <EmptyStateBody>{t('An integration starts a template when another system calls its URL, for example on a git push.')}</EmptyStateBody>
          </EmptyState>
        )}
        {!!integrations.data?.length && (
          <Table aria-label={t('Integrations')} variant="compact">
            <Thead>
              <Tr>
                <Th>{t('Name')}</Th>
                <Th>{t('Template')}</Th>
                <Th screenReaderText={t('Actions')} />
              </Tr>
            </Thead>
            <Tbody>
              {integrations.data.map((integration) => (
                <Tr key={integration.id}>
                  <Td dataLabel={t('Name')}>
                    <ManagedName managedBy={integration.managed_by}>
                      <Link to={`/project/${project.id}/integration/${integration.id}`}>{integration.name}</Link>
                    </ManagedName>
                  </Td>
                  <Td dataLabel={t('Template')}>
                    {integration.template_id ? (
                      <Link to={`/project/${project.id}/templates/${integration.template_id}`}>{templateName(integration.template_id)}</Link>
                    ) : (
                      '—'
                    )}
                  </Td>
                  <Td isActionCell>
                    {manage && (
                      <Flex flexWrap={{ default: 'nowrap' }} gap={{ default: 'gapNone' }} justifyContent={{ default: 'justifyContentFlexEnd' }}>
                        <RowActions
                          name={integration.name}
                          labels={[t('Edit {{name}}', { name: integration.name }), t('Delete {{name}}', { name: integration.name })]}
                          managedBy={integration.managed_by}
                          onEdit={() => setEditing(integration)}
                          onDelete={() => setDeleting(integration)}
                        />
                      </Flex>
                    )}
                  </Td>
                </Tr>
              ))}
            </Tbody>
          </Table>
        )}
      </div>
      <Loading>
        {editing !== undefined && <IntegrationDialog integration={editing ?? undefined} onClose={() => setEditing(undefined)} />}
      </Loading>
      {deleting && <DeleteIntegrationDialog integration={deleting} onClose={() => setDeleting(null)} />}
    </PageSection>
  );
}
