import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { apiDelete, apiGet, apiPost, apiPut } from '../../api/client';
import { queryKeys } from '../../api/queryKeys';
import type { Template } from '../templates/types';
import type { Integration, KeyOption } from './types';

// Every integration key lives under queryKeys.integrations(projectId), so
// one invalidation after a write refreshes the list, the detail, and its
// aliases, matchers and values.
export const integrationKeys = {
  all: queryKeys.integrations,
  one: (projectId: number, integrationId: number) => [...queryKeys.integrations(projectId), integrationId] as const,
};

export function useInvalidateIntegrations(projectId: number) {
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: integrationKeys.all(projectId) });
}

/** GET /project/{id}/integrations: all of them, no paging (docs/features.md §2). */
export function useIntegrations(projectId: number) {
  return useQuery({
    queryKey: integrationKeys.all(projectId),
    queryFn: () => apiGet<Integration[]>(`/project/${projectId}/integrations`),
  });
}

export function useIntegration(projectId: number, integrationId: number) {
  return useQuery({
    queryKey: integrationKeys.one(projectId, integrationId),
    queryFn: () => apiGet<Integration>(`/project/${projectId}/integrations/${integrationId}`),
  });
}

export type IntegrationBody = Omit<Integration, 'id' | 'project_id'> & { id?: number };

/** POST for a new integration, PUT for an existing one (docs/features.md §4: one dialog for both). */
export function useSaveIntegration(projectId: number) {
  const invalidate = useInvalidateIntegrations(projectId);
  return useMutation({
    mutationFn: async (body: IntegrationBody): Promise<void> => {
      if (body.id) await apiPut(`/project/${projectId}/integrations/${body.id}`, body);
      else await apiPost<Integration>(`/project/${projectId}/integrations`, body);
    },
    onSuccess: invalidate,
  });
}

export function useDeleteIntegration(projectId: number) {
  const invalidate = useInvalidateIntegrations(projectId);
  return useMutation({
    mutationFn: (integration: Integration) => apiDelete(`/project/${projectId}/integrations/${integration.id}`),
    onSuccess: invalidate,
  });
}

/** The templates an integration may start, for its select and the list's links. */
export function useTemplateChoices(projectId: number) {
  return useQuery({
    queryKey: queryKeys.templates(projectId),
    queryFn: () => apiGet<Template[]>(`/project/${projectId}/templates`),
  });
}

/** The project's keys; the auth secret is the password of a login_password one. */
export function useKeyChoices(projectId: number, enabled = true) {
  return useQuery({
    queryKey: queryKeys.keys(projectId),
    queryFn: () => apiGet<KeyOption[]>(`/project/${projectId}/keys`),
    enabled,
  });
}
