import { lazy, Suspense } from 'react';
import { PageSection, Title } from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';
import { useProjectAccess } from '../../app/permissions';
import { TaskList } from './TaskList';

// The charts come in their own chunk, after the list: Victory is larger
// than the rest of the screen (docs/benchmarks.md, "Console first load").
const HistoryCharts = lazy(async () => ({ default: (await import('../charts/HistoryCharts')).HistoryCharts }));

/**
 * /project/{id}/history (docs/features.md §2): the project's charts (tasks
 * per day, a template's durations) and last tasks, 20 rows per page, live.
 */
export function HistoryPage() {
  const { t } = useTranslation('tasks');
  const { project } = useProjectAccess();
  return (
    <PageSection>
      <Title headingLevel="h1" className="pf-v6-u-mb-md">
        {t('History')}
      </Title>
      <Suspense fallback={null}>
        <HistoryCharts projectId={project.id} />
      </Suspense>
      <TaskList projectId={project.id} />
    </PageSection>
  );
}
