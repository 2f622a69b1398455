import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { apiDelete, apiGet, apiPost, apiPut } from '../../api/client';
import { queryKeys } from '../../api/queryKeys';
import type { Template } from '../templates/types';
import { refreshWhileRunning } from '../templates/useTemplates';
import { planViewsSave, positionsBody, type DraftView } from './reorder';
import type { View } from './types';

/** The project's views, in tab order (the server sorts by position). */
export function useViews(projectId: number) {
  return useQuery({
    queryKey: queryKeys.views(projectId),
    queryFn: () => apiGet<View[]>(`/project/${projectId}/views`),
  });
}

/** GET views/{vid}/templates; under the templates key so a template change refreshes it. */
export function useViewTemplates(projectId: number, viewId: number | undefined) {
  return useQuery({
    queryKey: [...queryKeys.templates(projectId), 'view', viewId],
    queryFn: () => apiGet<Template[]>(`/project/${projectId}/views/${viewId}/templates`),
    enabled: viewId !== undefined,
    refetchInterval: (query) => refreshWhileRunning(query.state.data),
  });
}

/**
 * Saves the edit-views dialog's draft (docs/features.md §4): deletes the views it
 * dropped, renames the changed ones, creates the new ones, then saves every
 * position, with the created views' real ids in place of their temporary
 * negative ones.
 */
export function useSaveViews(projectId: number) {
  const queryClient = useQueryClient();
  const base = `/project/${projectId}/views`;
  return useMutation({
    mutationFn: async ({ saved, drafts }: { saved: View[]; drafts: DraftView[] }) => {
      const plan = planViewsSave(saved, drafts);
      for (const id of plan.remove) await apiDelete(`${base}/${id}`);
      for (const view of plan.rename) await apiPut(`${base}/${view.id}`, view);
      const created = new Map<number, number>();
      for (const view of plan.create) {
        const answer = await apiPost<View>(base, { title: view.title, position: view.position });
        created.set(view.tempId, answer.id);
      }
      const positions = positionsBody(plan, created);
      if (Object.keys(positions).length > 0) await apiPost(`${base}/positions`, positions);
    },
    // Deleted views move their templates to no view: the lists change too.
    onSettled: () => {
      void queryClient.invalidateQueries({ queryKey: queryKeys.views(projectId) });
      void queryClient.invalidateQueries({ queryKey: queryKeys.templates(projectId) });
    },
  });
}
