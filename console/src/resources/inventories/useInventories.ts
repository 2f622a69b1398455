import { queryKeys } from '../../api/queryKeys';
import { useResourceList, useSaveResource } from '../../components/useProjectResource';
import type { Inventory } from './types';

export function useInventories(projectId: number) {
  return useResourceList<Inventory>(queryKeys.inventories(projectId), projectId, 'inventory');
}

/** POST answers 201 with the inventory, PUT 204. */
export function useSaveInventory(projectId: number) {
  return useSaveResource<Partial<Inventory>>(queryKeys.inventories(projectId), projectId, 'inventory');
}
