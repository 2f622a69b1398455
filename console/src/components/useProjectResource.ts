// The calls of the project resources that share one shape (docs/features.md §7): a list
// at /project/{id}/<path>, POST to create, PUT and DELETE on /<path>/{id},
// GET /<path>/{id}/refs. One hook per call; after a save the list reloads
// (docs/features.md §4).
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { apiGet, apiPost, apiPut } from '../api/client';

/** Resource paths under /project/{id}/, as docs/features.md §7 spells them. */
export type ResourcePath = 'keys' | 'repositories' | 'inventory' | 'environment';

export function resourceUrl(projectId: number, path: ResourcePath, id?: number): string {
  return `/project/${projectId}/${path}` + (id === undefined ? '' : `/${id}`);
}

export function useResourceList<T>(queryKey: readonly unknown[], projectId: number, path: ResourcePath) {
  return useQuery({ queryKey, queryFn: () => apiGet<T[]>(resourceUrl(projectId, path)) });
}

/**
 * Creates (POST) an object without an id, updates (PUT) one with an id.
 * Keys, repositories and environments answer 204, inventories 201: the
 * list is reloaded either way, so neither answer is read.
 */
export function useSaveResource<T extends { id?: number }>(queryKey: readonly unknown[], projectId: number, path: ResourcePath) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (item: T) =>
      item.id ? apiPut(resourceUrl(projectId, path, item.id), item) : apiPost(resourceUrl(projectId, path), item),
    onSuccess: () => queryClient.invalidateQueries({ queryKey }),
  });
}
