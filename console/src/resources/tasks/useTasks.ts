import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { apiGet, apiPost } from '../../api/client';
import { taskKeys } from './keys';
import type { Task } from './types';

/** A template's tasks when templateId is given (GET templates/{tid}/tasks/last), else the project's. */
export function useTaskList(projectId: number, templateId?: number) {
  return useQuery({
    queryKey: templateId ? taskKeys.ofTemplate(projectId, templateId) : taskKeys.last(projectId),
    queryFn: () =>
      apiGet<Task[]>(templateId ? `/project/${projectId}/templates/${templateId}/tasks/last` : `/project/${projectId}/tasks/last`),
  });
}

/** The successful tasks of a build template: the versions a deploy may deploy (docs/features.md §4). */
export function useBuildTasks(projectId: number, buildTemplateId: number | null) {
  return useQuery({
    queryKey: taskKeys.builds(projectId, buildTemplateId ?? 0),
    queryFn: () => apiGet<Task[]>(`/project/${projectId}/templates/${buildTemplateId}/tasks?status=success`),
    enabled: !!buildTemplateId,
  });
}

/** One task (GET /project/{id}/tasks/{taskId}); kept live by the socket (api/live.ts). */
export function useTask(projectId: number, taskId: number) {
  return useQuery({
    queryKey: taskKeys.task(projectId, taskId),
    queryFn: () => apiGet<Task>(`/project/${projectId}/tasks/${taskId}`),
  });
}

/** What POST /project/{id}/tasks takes (docs/features.md §7). */
export interface NewTask {
  template_id: number;
  build_task_id?: number;
  message: string;
  /** JSON object text: the survey's answers. */
  environment: string;
  /** JSON object text: the answers to secret survey variables (never in environment). */
  secret?: string;
  debug: boolean;
  dry_run: boolean;
  diff: boolean;
  /** JSON array text, only when the template allows override. */
  arguments?: string;
  git_branch?: string;
  commit_hash?: string;
}

/** Reloads the lists a task change shows up in: History, template rows and detail. */
function useInvalidateTaskLists(projectId: number) {
  const queryClient = useQueryClient();
  return () =>
    queryClient.invalidateQueries({
      predicate: ({ queryKey }) =>
        queryKey[0] === 'project' &&
        queryKey[1] === projectId &&
        // Not a task's own output: it is appended to, never reloaded.
        !queryKey.includes('output') &&
        (queryKey[2] === 'tasks' || queryKey[2] === 'templates'),
    });
}

export function useStartTask(projectId: number) {
  const invalidate = useInvalidateTaskLists(projectId);
  return useMutation({
    mutationFn: (task: NewTask) => apiPost<Task>(`/project/${projectId}/tasks`, task),
    onSuccess: invalidate,
  });
}

/** POST …/tasks/{id}/stop {force}: force only when the task is already stopping (docs/features.md §4). */
export function useStopTask(projectId: number, taskId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (force: boolean) => apiPost(`/project/${projectId}/tasks/${taskId}/stop`, { force }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: taskKeys.task(projectId, taskId), exact: true }),
  });
}

export function useConfirmTask(projectId: number, taskId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => apiPost(`/project/${projectId}/tasks/${taskId}/confirm`),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: taskKeys.task(projectId, taskId), exact: true }),
  });
}
