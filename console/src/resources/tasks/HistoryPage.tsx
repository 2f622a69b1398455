import { PageSection, Title } from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';
import { useProjectAccess } from '../../app/permissions';
import { TaskList } from './TaskList';

/** /project/{id}/history (docs/features.md §2): the project's last tasks, 20 rows per page, live. */
export function HistoryPage() {
  const { t } = useTranslation('tasks');
  const { project } = useProjectAccess();
  return (
    <PageSection>
      <Title headingLevel="h1" className="pf-v6-u-mb-md">
        {t('History')}
      </Title>
      <TaskList projectId={project.id} />
    </PageSection>
  );
}
