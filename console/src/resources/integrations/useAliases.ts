import { useMutation, useQuery } from '@tanstack/react-query';
import { apiDelete, apiGet, apiPost } from '../../api/client';
import { integrationKeys, useInvalidateIntegrations } from './useIntegrations';
import type { IntegrationAlias } from './types';

// Aliases live at /integrations/aliases for the project's own, and at
// /integrations/{integrationId}/aliases for one integration's (docs/features.md §7).
function aliasesPath(projectId: number, integrationId?: number): string {
  return integrationId
    ? `/project/${projectId}/integrations/${integrationId}/aliases`
    : `/project/${projectId}/integrations/aliases`;
}

function aliasesKey(projectId: number, integrationId?: number) {
  return integrationId
    ? [...integrationKeys.one(projectId, integrationId), 'aliases']
    : [...integrationKeys.all(projectId), 'aliases'];
}

/**
 * The aliases; data is undefined (the spec's null) while loading. An alias
 * is a credential the server shows only to those with updateProject, so
 * the list is not asked for without it (enabled false).
 */
export function useAliases(projectId: number, integrationId?: number, enabled = true) {
  return useQuery({
    queryKey: aliasesKey(projectId, integrationId),
    queryFn: () => apiGet<IntegrationAlias[]>(aliasesPath(projectId, integrationId)),
    enabled,
  });
}

/** POST with no body: the server makes a fresh random alias. */
export function useAddAlias(projectId: number, integrationId?: number) {
  const invalidate = useInvalidateIntegrations(projectId);
  return useMutation({
    mutationFn: () => apiPost<IntegrationAlias>(aliasesPath(projectId, integrationId)),
    onSuccess: invalidate,
  });
}

export function useDeleteAlias(projectId: number, integrationId?: number) {
  const invalidate = useInvalidateIntegrations(projectId);
  return useMutation({
    mutationFn: (alias: IntegrationAlias) => apiDelete(`${aliasesPath(projectId, integrationId)}/${alias.id}`),
    onSuccess: invalidate,
  });
}
