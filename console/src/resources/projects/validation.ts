import type { Errors } from '../../components/useLazyValidation';
import { msg } from '../../i18n/msg';

/** The project form as typed: max parallel tasks is text until it is checked. */
export interface ProjectFormValues {
  name: string;
  alert: boolean;
  alertChat: string;
  maxParallelTasks: string;
}

/**
 * max_parallel_tasks (docs/features.md §5): optional; when given, a whole number of at
 * least 0 (0 means unlimited).
 */
export function validateMaxParallelTasks(value: string): string | undefined {
  const text = value.trim();
  if (text === '') return undefined;
  if (!/^[-+]?\d+$/.test(text)) return msg('Must be integer');
  if (Number(text) < 0) return msg('Must be 0 or greater');
  return undefined;
}

export function validateProject(values: ProjectFormValues): Errors<'name' | 'maxParallelTasks'> {
  return {
    name: values.name.trim() ? undefined : msg('Project name is required'),
    maxParallelTasks: validateMaxParallelTasks(values.maxParallelTasks),
  };
}
