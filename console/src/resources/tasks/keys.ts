// The task screens' react-query keys, built on the shared ones in
// api/queryKeys.ts so a project's invalidation still reaches them.
import { queryKeys } from '../../api/queryKeys';

export const taskKeys = {
  /** GET /project/{id}/tasks/last: History. */
  last: (projectId: number) => [...queryKeys.tasks(projectId), 'last'] as const,
  /** GET templates/{tid}/tasks/last…: a template's tasks (detail, list rows). */
  ofTemplate: (projectId: number, templateId: number) => [...queryKeys.template(projectId, templateId), 'tasks'] as const,
  /** GET templates/{bid}/tasks?status=success: builds a deploy may deploy. */
  builds: (projectId: number, buildTemplateId: number) =>
    [...queryKeys.template(projectId, buildTemplateId), 'tasks', 'success'] as const,
  task: queryKeys.task,
  /** The task's output lines (a TaskOutput, appended to in place). */
  output: (projectId: number, taskId: number) => [...queryKeys.task(projectId, taskId), 'output'] as const,
};
