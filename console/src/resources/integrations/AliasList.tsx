import { Suspense } from 'react';
import { Button, Content, Flex, FlexItem, Title } from '@patternfly/react-core';
import CopyIcon from '@patternfly/react-icons/dist/esm/icons/copy-icon';
import TrashIcon from '@patternfly/react-icons/dist/esm/icons/trash-icon';
import { useTranslation } from 'react-i18next';
import './integrations.css';
import { errorMessage } from '../../api/errors';
import { useNotify } from '../../app/Notifications';
import { Permission, useProjectAccess } from '../../app/permissions';
import { LazyManaged } from '../../components/lazyDialogs';
import { useAddAlias, useAliases, useDeleteAlias } from './useAliases';
import { useCopyAlias } from './useCopyAlias';

interface AliasListProps {
  /** The integration whose aliases these are; none for the project's own. */
  integrationId?: number;
  /** Who manages the integration: its aliases are its Git's, none added or deleted here. */
  managedBy?: string;
}

/**
 * An integration's public URLs, or the project's (docs/features.md §2): each with a
 * copy button and a delete button, then Add Alias, which reads "Loading
 * aliases..." until the list is there. An alias URL starts tasks, so the
 * server shows aliases only to those who may change integrations; others
 * read a line saying so, and the list is never asked for. An alias that a
 * GitOps tool applied keeps its delete disabled, saying why; a managed
 * integration's aliases have neither delete nor Add (docs/gitops.md).
 */
export function AliasList({ integrationId, managedBy }: AliasListProps) {
  const { t } = useTranslation('integrations');
  const { project, can } = useProjectAccess();
  const notify = useNotify();
  const manage = can(Permission.updateProject);
  const aliases = useAliases(project.id, integrationId, manage);
  const add = useAddAlias(project.id, integrationId);
  const remove = useDeleteAlias(project.id, integrationId);
  const copy = useCopyAlias();
  const loading = aliases.data === undefined;

  return (
    <section aria-labelledby={`aliases-${integrationId ?? 'project'}`}>
      <Title headingLevel="h2" size="lg" id={`aliases-${integrationId ?? 'project'}`} className="bastion-integrations__heading">
        {integrationId ? t('Aliases') : t('Project aliases')}
      </Title>
      <Content component="p" className="bastion-integrations__muted">
        {integrationId
          ? t('Requests to these URLs reach this integration.')
          : t('Requests to these URLs reach every integration available by project alias.')}
      </Content>
      {!manage && (
        <Content component="p" className="bastion-integrations__muted">
          {t('Alias URLs are shown only to those who may change integrations.')}
        </Content>
      )}
      {aliases.isError && (
        <Content component="p" className="bastion-integrations__danger" role="alert">
          {t('The aliases could not be loaded: {{reason}}', { reason: errorMessage(aliases.error) })}
        </Content>
      )}
      {aliases.data?.length === 0 && (
        <Content component="p" className="bastion-integrations__muted">
          {t('No aliases yet.')}
        </Content>
      )}
      <ul aria-label={t('Aliases')} className="bastion-integrations__aliases">
        {aliases.data?.map((alias) => (
          <li key={alias.id}>
            <Flex alignItems={{ default: 'alignItemsCenter' }} flexWrap={{ default: 'nowrap' }} gap={{ default: 'gapSm' }}>
              <FlexItem flex={{ default: 'flex_1' }} style={{ minWidth: 0 }}>
                <code>{alias.url}</code>
              </FlexItem>
              <Button
                variant="plain"
                icon={<CopyIcon />}
                aria-label={t('Copy the URL {{url}}', { url: alias.url })}
                title={t('Copy URL')}
                onClick={() => void copy(alias.url)}
              />
              {manage && !managedBy && (
                <Button
                  variant="plain"
                  icon={<TrashIcon />}
                  aria-label={t('Delete the alias {{url}}', { url: alias.url })}
                  title={alias.managed_by ? undefined : t('Delete alias')}
                  isAriaDisabled={!!alias.managed_by}
                  isDisabled={remove.isPending}
                  onClick={() => remove.mutate(alias, { onError: notify.error })}
                />
              )}
              {alias.managed_by && (
                <Suspense fallback={null}>
                  <LazyManaged by={alias.managed_by} part="label" />
                </Suspense>
              )}
            </Flex>
          </li>
        ))}
      </ul>
      {manage && !managedBy && (
        <Button
          variant="secondary"
          isDisabled={loading}
          isLoading={add.isPending}
          onClick={() => add.mutate(undefined, { onError: notify.error })}
        >
          {loading && !aliases.isError ? t('Loading aliases...') : t('Add Alias')}
        </Button>
      )}
    </section>
  );
}
