import { useQuery } from '@tanstack/react-query';
import { apiGet } from '../../api/client';
import { queryKeys } from '../../api/queryKeys';
import type { Task } from '../tasks/types';
import type { App, Schedule, Template } from './types';

/** Tasks per template in the list's expanded rows (spec §9). */
export const LAST_TASKS_IN_LIST = 5;

export function useTemplates(projectId: number, enabled = true) {
  return useQuery({
    queryKey: queryKeys.templates(projectId),
    queryFn: () => apiGet<Template[]>(`/project/${projectId}/templates`),
    enabled,
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
