import { lazy, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { queryKeys } from '../../api/queryKeys';
import { useQueryClient } from '@tanstack/react-query';
import { Permission, useProjectAccess } from '../../app/permissions';
import { LazyDeleteResourceDialog as DeleteResourceDialog } from '../../components/lazyDialogs';
import { Loading } from '../../app/lazyPages';
import { ResourcePage } from '../../components/ResourcePage';
import { resourceUrl } from '../../components/useProjectResource';
import type { Key } from './types';
import { useKeys } from './useKeys';
import { useKeyTypeTitle } from './keyTypes';

// The form loads when first opened.
const KeyDialog = lazy(async () => ({ default: (await import('./KeyDialog')).KeyDialog }));

/** /project/{id}/keys: the key store (docs/features.md §2). */
export function KeysPage() {
  const { t } = useTranslation('resources');
  const { project, can } = useProjectAccess();
  const keys = useKeys(project.id);
  const queryClient = useQueryClient();
  const typeTitle = useKeyTypeTitle();
  const [editing, setEditing] = useState<Key | 'new' | null>(null);
  const [deleting, setDeleting] = useState<Key | null>(null);

  return (
    <ResourcePage<Key>
      title={t('Key Store')}
      newLabel={t('New Key')}
      canWrite={can(Permission.manageProjectResources)}
      list={keys}
      columns={[
        { title: t('Name'), cell: (key) => key.name },
        { title: t('Type'), cell: (key) => typeTitle(key.type) },
      ]}
      errorTitle={t('The keys could not be loaded')}
      emptyTitle={t('No keys yet')}
      emptyBody={t('Keys hold the SSH keys and passwords that repositories and inventories sign in with.')}
      onNew={() => setEditing('new')}
      onEdit={setEditing}
      onDelete={setDeleting}
    >
      <Loading>
        {editing && <KeyDialog projectId={project.id} keyItem={editing === 'new' ? undefined : editing} onClose={() => setEditing(null)} />}
        {deleting && (
          <DeleteResourceDialog
            kind="key"
            name={deleting.name}
            path={resourceUrl(project.id, 'keys', deleting.id)}
            onDeleted={() => void queryClient.invalidateQueries({ queryKey: queryKeys.keys(project.id) })}
            onClose={() => setDeleting(null)}
          />
        )}
      </Loading>
    </ResourcePage>
  );
}
