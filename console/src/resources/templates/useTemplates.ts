import { useQuery } from '@tanstack/react-query';
import { apiGet } from '../../api/client';
import { queryKeys } from '../../api/queryKeys';
import { isFinished } from '../tasks/status';
import type { Task } from '../tasks/types';
import type { App, Schedule, Template } from './types';

/** Tasks per template in the list's expanded rows (docs/features.md §9). */
export const LAST_TASKS_IN_LIST = 5;

/** How often a list with unfinished last tasks is read again, so their status moves on. */
export const LIVE_REFRESH_MS = 3000;

/** A list refreshes while any template's last task has not finished. */
export function refreshWhileRunning(templates: Template[] | undefined): number | false {
  return templates?.some((t) => t.last_task && !isFinished(t.last_task.status)) ? LIVE_REFRESH_MS : false;
}

export function useTemplates(projectId: number, enabled = true) {
  return useQuery({
    queryKey: queryKeys.templates(projectId),
    queryFn: () => apiGet<Template[]>(`/project/${projectId}/templates`),
    enabled,
    refetchInterval: (query) => refreshWhileRunning(query.state.data),
  });
}

export function useTemplate(projectId: number, templateId: number | undefined) {
  return useQuery({
    queryKey: queryKeys.template(projectId, templateId ?? 0),
    queryFn: () => apiGet<Template>(`/project/${projectId}/templates/${templateId}`),
    enabled: templateId !== undefined,
  });
}

/** GET templates/{tid}/tasks/last?limit=5: an expanded row's tasks. */
export function useLastTasks(projectId: number, templateId: number) {
  return useQuery({
    queryKey: [...queryKeys.template(projectId, templateId), 'tasks', 'last'],
    queryFn: () => apiGet<Task[]>(`/project/${projectId}/templates/${templateId}/tasks/last?limit=${LAST_TASKS_IN_LIST}`),
    refetchInterval: (query) => (query.state.data?.some((task) => !isFinished(task.status)) ? LIVE_REFRESH_MS : false),
  });
}

export function useTemplateSchedules(projectId: number, templateId: number | undefined) {
  return useQuery({
    queryKey: [...queryKeys.template(projectId, templateId ?? 0), 'schedules'],
    queryFn: () => apiGet<Schedule[]>(`/project/${projectId}/templates/${templateId}/schedules`),
    enabled: templateId !== undefined,
  });
}

/** GET /apps: what the server can run, for the "new template" menu. */
export function useApps() {
  return useQuery({
    queryKey: queryKeys.apps,
    queryFn: () => apiGet<App[]>('/apps'),
    staleTime: Infinity,
  });
}
