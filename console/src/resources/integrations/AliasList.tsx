import { Button, Content, Flex, FlexItem, Title } from '@patternfly/react-core';
import CopyIcon from '@patternfly/react-icons/dist/esm/icons/copy-icon';
import TrashIcon from '@patternfly/react-icons/dist/esm/icons/trash-icon';
import { useTranslation } from 'react-i18next';
import './integrations.css';
import { errorMessage } from '../../api/errors';
import { useNotify } from '../../app/Notifications';
import { Permission, useProjectAccess } from '../../app/permissions';
import { useAddAlias, useAliases, useDeleteAlias } from './useAliases';
import { useCopyAlias } from './useCopyAlias';

interface AliasListProps {
  /** The integration whose aliases these are; none for the project's own. */
  integrationId?: number;
}

/**
 * An integration's public URLs, or the project's (docs/features.md §2): each with a
 * copy button and a delete button, then Add Alias, which reads "Loading
 * aliases..." until the list is there. An alias URL starts tasks, so the
 * server shows aliases only to those who may change integrations; others
 * read a line saying so, and the list is never asked for.
 */
export function AliasList({ integrationId }: AliasListProps) {
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
              {manage && (
                <Button
                  variant="plain"
                  icon={<TrashIcon />}
                  aria-label={t('Delete the alias {{url}}', { url: alias.url })}
                  title={t('Delete alias')}
                  isDisabled={remove.isPending}
                  onClick={() => remove.mutate(alias, { onError: notify.error })}
                />
              )}
            </Flex>
          </li>
        ))}
      </ul>
      {manage && (
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
