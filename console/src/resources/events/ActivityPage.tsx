import { useState } from 'react';
import { Bullseye, EmptyState, EmptyStateBody, PageSection, Spinner, Title } from '@patternfly/react-core';
import ExclamationCircleIcon from '@patternfly/react-icons/dist/esm/icons/exclamation-circle-icon';
import ListIcon from '@patternfly/react-icons/dist/esm/icons/list-icon';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { useProjectAccess } from '../../app/permissions';
import { ago, dateTime } from '../tasks/dates';
import { Pager, pageWithin } from '../tasks/Pager';
import { useProjectEvents } from './useEvents';

/** Dashboards page at 20 rows (docs/features.md §2, §9). */
export const EVENTS_PER_PAGE = 20;

/** /project/{id}/activity (docs/features.md §2): the project's event list, 20 rows per page. */
export function ActivityPage() {
  const { t, i18n } = useTranslation('events');
  const { project } = useProjectAccess();
  const events = useProjectEvents(project.id);
  const [page, setPage] = useState(1);
  const all = events.data ?? [];
  const current = pageWithin(page, all.length, EVENTS_PER_PAGE);
  const rows = all.slice((current - 1) * EVENTS_PER_PAGE, current * EVENTS_PER_PAGE);
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
      {events.data && all.length === 0 && (
        <EmptyState headingLevel="h2" titleText={t('No activity yet')} icon={ListIcon}>
          <EmptyStateBody>{t('Changes to the project and its tasks are listed here.')}</EmptyStateBody>
        </EmptyState>
      )}
      {events.data && all.length > 0 && (
        <>
          <Pager total={all.length} perPage={EVENTS_PER_PAGE} page={current} onPage={setPage} label={t('Activity pages')} />
          <Table aria-label={t('Activity')} variant="compact">
            <Thead>
              <Tr>
                <Th>{t('Time')}</Th>
                <Th>{t('User')}</Th>
                <Th>{t('Description')}</Th>
              </Tr>
            </Thead>
            <Tbody>
              {rows.map((event, index) => (
                <Tr key={`${event.created}-${current}-${index}`}>
                  <Td dataLabel={t('Time')}>
                    {event.created ? (
                      <time dateTime={event.created} title={dateTime(event.created, i18n.language)}>
                        {ago(event.created, i18n.language)}
                      </time>
                    ) : (
                      '—'
                    )}
                  </Td>
                  <Td dataLabel={t('User')}>{event.username || '—'}</Td>
                  <Td dataLabel={t('Description')}>{event.description}</Td>
                </Tr>
              ))}
            </Tbody>
          </Table>
        </>
      )}
    </PageSection>
  );
}
