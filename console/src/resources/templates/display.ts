// What the template list shows for a template's last run (docs/features.md §2): its
// status, or "Not launched" when it never ran, and the version a build made
// or a deploy deployed. Pure, so the rules are tested without rendering.
import type { Task, TaskStatus } from '../tasks/types';
import type { Template, TemplateType } from './types';

export const NOT_LAUNCHED = 'Not launched';

/** English names of the template types (the editor and the detail show them). */
export const typeTitles: Record<TemplateType, string> = { '': 'Task', build: 'Build', deploy: 'Deploy' };

/** The last task's status, or undefined when the template never ran. */
export function lastStatus(template: Template): TaskStatus | undefined {
  return template.last_task?.status;
}

/**
 * The version of the last run: a build shows the version it made, a deploy
 * the version of the build it deployed; a plain task has none.
 */
export function lastVersion(template: Pick<Template, 'type' | 'last_task'>): string | undefined {
  return taskVersion(template.last_task, template.type);
}

/** A task's version by its template's type (also for the expanded rows). */
export function taskVersion(task: Task | null | undefined, type: TemplateType): string | undefined {
  if (!task || type === '') return undefined;
  if (type === 'deploy') return task.build_task?.version || task.version || undefined;
  return task.version || undefined;
}

/** The action a template's type offers (docs/features.md §2): task Run, build Build, deploy Deploy. */
export function runLabel(type: TemplateType): 'Run' | 'Build' | 'Deploy' {
  return type === 'build' ? 'Build' : type === 'deploy' ? 'Deploy' : 'Run';
}

/** The id of the last task, from last_task_id when the server gives it. */
export function lastTaskId(template: Template): number | undefined {
  return template.last_task_id ?? template.last_task?.id ?? undefined;
}
