import { lazy, useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { queryKeys } from '../../api/queryKeys';
import { Permission, useProjectAccess } from '../../app/permissions';
import { LazyDeleteResourceDialog as DeleteResourceDialog } from '../../components/lazyDialogs';
import { Loading } from '../../app/lazyPages';
import { ResourcePage } from '../../components/ResourcePage';
import { resourceUrl } from '../../components/useProjectResource';
import type { Environment } from './types';
import { useEnvironments } from './useEnvironments';

// The form loads when first opened.
const EnvironmentDialog = lazy(async () => ({ default: (await import('./EnvironmentDialog')).EnvironmentDialog }));

/** /project/{id}/environment (docs/features.md §2). */
export function EnvironmentsPage() {
  const { t } = useTranslation('resources');
  const { project, can } = useProjectAccess();
  const environments = useEnvironments(project.id);
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState<Environment | 'new' | null>(null);
  const [deleting, setDeleting] = useState<Environment | null>(null);

  return (
    <ResourcePage<Environment>
      title={t('Environment')}
      newLabel={t('New Environment')}
      canWrite={can(Permission.manageProjectResources)}
      list={environments}
      columns={[
        { title: t('Name'), cell: (env) => env.name },
        { title: t('Secrets'), cell: (env) => (env.secrets ?? []).map((s) => s.name).join(', ') || '—' },
      ]}
      errorTitle={t('The environments could not be loaded')}
      emptyTitle={t('No environments yet')}
      emptyBody={t('An environment holds the variables and secrets a task runs with.')}
      onNew={() => setEditing('new')}
      onEdit={setEditing}
      onDelete={setDeleting}
    >
      <Loading>
        {editing && (
          <EnvironmentDialog projectId={project.id} environment={editing === 'new' ? undefined : editing} onClose={() => setEditing(null)} />
        )}
        {deleting && (
          <DeleteResourceDialog
            kind="environment"
            name={deleting.name}
            path={resourceUrl(project.id, 'environment', deleting.id)}
            onDeleted={() => void queryClient.invalidateQueries({ queryKey: queryKeys.environments(project.id) })}
            onClose={() => setDeleting(null)}
          />
        )}
      </Loading>
    </ResourcePage>
  );
}
