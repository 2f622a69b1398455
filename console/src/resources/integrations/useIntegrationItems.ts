import { useMutation, useQuery } from '@tanstack/react-query';
import { apiDelete, apiGet, apiPost, apiPut } from '../../api/client';
import { integrationKeys, useInvalidateIntegrations } from './useIntegrations';
import type { ExtractValue, Matcher } from './types';

/** An integration's two lists (docs/features.md §7): the same calls under /values and /matchers. */
export type ItemKind = 'values' | 'matchers';
type ItemOf<K extends ItemKind> = K extends 'values' ? ExtractValue : Matcher;

function itemsPath(projectId: number, integrationId: number, kind: ItemKind): string {
  return `/project/${projectId}/integrations/${integrationId}/${kind}`;
}

export function useIntegrationItems<K extends ItemKind>(projectId: number, integrationId: number, kind: K) {
  return useQuery({
    queryKey: [...integrationKeys.one(projectId, integrationId), kind],
    queryFn: () => apiGet<ItemOf<K>[]>(itemsPath(projectId, integrationId, kind)),
  });
}

export type ItemBody<K extends ItemKind> = Omit<ItemOf<K>, 'id' | 'integration_id'> & { id?: number };

/** POST a new item, PUT an existing one; the payload carries integration_id (docs/features.md §7). */
export function useSaveIntegrationItem<K extends ItemKind>(projectId: number, integrationId: number, kind: K) {
  const invalidate = useInvalidateIntegrations(projectId);
  return useMutation({
    mutationFn: (item: ItemBody<K>) => {
      const body = { ...item, integration_id: integrationId };
      const path = itemsPath(projectId, integrationId, kind);
      return item.id ? apiPut(`${path}/${item.id}`, body) : apiPost(path, body);
    },
    onSuccess: invalidate,
  });
}

export function useDeleteIntegrationItem(projectId: number, integrationId: number, kind: ItemKind) {
  const invalidate = useInvalidateIntegrations(projectId);
  return useMutation({
    mutationFn: (id: number) => apiDelete(`${itemsPath(projectId, integrationId, kind)}/${id}`),
    onSuccess: invalidate,
  });
}
