import { Suspense } from 'react';
import { Label, Spinner } from '@patternfly/react-core';
import { Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { useProjectAccess } from '../../app/permissions';
import { LazyManaged } from '../../components/lazyDialogs';
import type { Template } from './types';
import { useNames } from './useProjectOptions';
import { useTemplateSchedules } from './useTemplates';

/** GET templates/{tid}/schedules: when the template runs by itself. */
export function TemplateSchedules({ template }: { template: Template }) {
  const { t } = useTranslation('templates');
  const { project } = useProjectAccess();
  const schedules = useTemplateSchedules(project.id, template.id);
  const repositories = useNames(project.id, 'repositories');
  if (schedules.isPending) return <Spinner size="md" aria-label={t('Loading')} />;
  if (schedules.isError) return <p style={{ color: 'var(--pf-t--global--text--color--status--danger--default)' }}>{errorMessage(schedules.error)}</p>;
  if (schedules.data.length === 0) return <p>{t('No schedule')}</p>;
  return (
    <Table aria-label={t('Schedules')} variant="compact" borders={false}>
      <Thead>
        <Tr>
          <Th>{t('Cron')}</Th>
          <Th>{t('Runs')}</Th>
          <Th>{t('Status')}</Th>
        </Tr>
      </Thead>
      <Tbody>
        {schedules.data.map((schedule) => (
          <Tr key={schedule.id}>
            <Td dataLabel={t('Cron')}>
              <code>{schedule.cron_format}</code>
            </Td>
            <Td dataLabel={t('Runs')}>
              {schedule.repository_id
                ? t('Only on a new commit of {{repository}}', {
                    repository: repositories.get(schedule.repository_id) ?? `#${schedule.repository_id}`,
                  })
                : t('Every time')}
            </Td>
            <Td dataLabel={t('Status')}>
              <Label isCompact color={schedule.active ? 'green' : 'grey'}>
                {schedule.active ? t('Active') : t('Paused')}
              </Label>
              {/* Not ManagedName: its module's icons would weigh on this screen's first load. */}
              {schedule.managed_by && (
                <Suspense fallback={null}>
                  <LazyManaged by={schedule.managed_by} part="label" />
                </Suspense>
              )}
            </Td>
          </Tr>
        ))}
      </Tbody>
    </Table>
  );
}
