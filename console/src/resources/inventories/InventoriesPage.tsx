import { lazy, useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { queryKeys } from '../../api/queryKeys';
import { Permission, useProjectAccess } from '../../app/permissions';
import { LazyDeleteResourceDialog as DeleteResourceDialog } from '../../components/lazyDialogs';
import { Loading } from '../../app/lazyPages';
import { ResourcePage } from '../../components/ResourcePage';
import { resourceUrl } from '../../components/useProjectResource';
import { useKeys } from '../keys/useKeys';
import { useRepositories } from '../repositories/useRepositories';
import { useInventoryTypeTitle } from './inventoryTypes';
import type { Inventory } from './types';
import { useInventories } from './useInventories';

// The form loads when first opened.
const InventoryDialog = lazy(async () => ({ default: (await import('./InventoryDialog')).InventoryDialog }));

/** /project/{id}/inventory (docs/features.md §2). */
export function InventoriesPage() {
  const { t } = useTranslation('resources');
  const { project, can } = useProjectAccess();
  const inventories = useInventories(project.id);
  const keys = useKeys(project.id);
  const repositories = useRepositories(project.id);
  const queryClient = useQueryClient();
  const typeTitle = useInventoryTypeTitle();
  const [editing, setEditing] = useState<Inventory | 'new' | null>(null);
  const [deleting, setDeleting] = useState<Inventory | null>(null);
  const keyName = (id: number | null) => (id && keys.data?.find((key) => key.id === id)?.name) || '—';

  return (
    <ResourcePage<Inventory>
      title={t('Inventory')}
      newLabel={t('New Inventory')}
      canWrite={can(Permission.manageProjectResources)}
      list={inventories}
      columns={[
        { title: t('Name'), cell: (inv) => inv.name },
        { title: t('Type'), cell: (inv) => typeTitle(inv.type) },
        { title: t('User Credentials'), cell: (inv) => keyName(inv.ssh_key_id) },
        { title: t('Sudo Credentials'), cell: (inv) => keyName(inv.become_key_id) },
      ]}
      errorTitle={t('The inventories could not be loaded')}
      emptyTitle={t('No inventories yet')}
      emptyBody={t('An inventory lists the hosts a playbook runs on, and the credentials to reach them.')}
      onNew={() => setEditing('new')}
      onEdit={setEditing}
      onDelete={setDeleting}
    >
      <Loading>
        {editing && (
          <InventoryDialog
            projectId={project.id}
            inventory={editing === 'new' ? undefined : editing}
            keys={keys.data ?? []}
            repositories={repositories.data ?? []}
            onClose={() => setEditing(null)}
          />
        )}
        {deleting && (
          <DeleteResourceDialog
            kind="inventory"
            name={deleting.name}
            path={resourceUrl(project.id, 'inventory', deleting.id)}
            onDeleted={() => void queryClient.invalidateQueries({ queryKey: queryKeys.inventories(project.id) })}
            onClose={() => setDeleting(null)}
          />
        )}
      </Loading>
    </ResourcePage>
  );
}
