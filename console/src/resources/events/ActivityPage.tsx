import { Bullseye, EmptyState, EmptyStateBody, PageSection, Spinner, Title } from '@patternfly/react-core';
import ExclamationCircleIcon from '@patternfly/react-icons/dist/esm/icons/exclamation-circle-icon';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { useProjectAccess } from '../../app/permissions';
import { relativeTime } from '../../app/relativeTime';
import { useProjectEvents } from './useEvents';

/** /project/{id}/activity (spec §2): the project's event list. */
export function ActivityPage() {
  const { t, i18n } = useTranslation();
  const { project } = useProjectAccess();
  const events = useProjectEvents(project.id);
  return (
    <PageSection>
      <Title headingLevel="h1" className="pf-v6-u-mb-md">
        {t('Activity')}
      </Title>
      {events.isPending && (
        <Bullseye>
          <Spinner aria-label={t('Loading')} />
        </Bullseye>
      )}
      {events.isError && (
        <EmptyState headingLevel="h2" titleText={t('The activity could not be loaded')} icon={ExclamationCircleIcon} status="danger">
          <EmptyStateBody>{errorMessage(events.error)}</EmptyStateBody>
        </EmptyState>
      )}
      {events.data && (
        <Table aria-label={t('Activity')} variant="compact">
          <Thead>
            <Tr>
              <Th>{t('Time')}</Th>
              <Th>{t('User')}</Th>
              <Th>{t('Description')}</Th>
            </Tr>
          </Thead>
          <Tbody>
            {events.data.map((event, index) => (
              <Tr key={`${event.created}-${index}`}>
                <Td dataLabel={t('Time')}>
                  <time dateTime={event.created} title={new Date(event.created).toLocaleString(i18n.language.replace('_', '-'))}>
                    {relativeTime(event.created, i18n.language)}
                  </time>
                </Td>
                <Td dataLabel={t('User')}>{event.username || '—'}</Td>
                <Td dataLabel={t('Description')}>{event.description}</Td>
              </Tr>
            ))}
          </Tbody>
        </Table>
      )}
    </PageSection>
  );
}
