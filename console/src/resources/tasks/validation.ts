import type { Errors } from '../../components/useLazyValidation';
import type { SurveyVar, Template } from '../templates/types';
import type { NewTask } from './useTasks';

/** The new task form (docs/features.md §3 Task, §5 survey variable and deploy task). */
export interface NewTaskValues {
  /** The chosen build task's id, for a deploy template. */
  buildTaskId: string;
  /** Survey answers by variable name. */
  survey: Record<string, string>;
  message: string;
  debug: boolean;
  dryRun: boolean;
  diff: boolean;
  /** JSON array text; only sent when the template allows override. */
  arguments: string;
  branch: string;
}

/**
 * Says a message in the interface language: the dialog passes i18next's t;
 * the default keeps the English text (with its {{placeholders}} filled), so
 * tests read the messages word for word.
 */
export type Say = (key: string, values?: Record<string, string>) => string;

export const english: Say = (key, values = {}) => key.replace(/\{\{(\w+)\}\}/g, (_, name: string) => values[name] ?? '');

const digitsOnly = /^\d+$/;

/** Field names: buildTaskId, arguments, and survey:<name> for each variable. */
export function surveyField(variable: SurveyVar): `survey:${string}` {
  return `survey:${variable.name}`;
}

export function validateNewTask(values: NewTaskValues, template: Template, say: Say = english): Errors {
  const errors: Errors = {};
  if (template.type === 'deploy' && !values.buildTaskId) {
    errors.buildTaskId = say('Build version is required');
  }
  for (const variable of template.survey_vars ?? []) {
    const value = (values.survey[variable.name] ?? '').trim();
    if (!value) {
      if (variable.required) errors[surveyField(variable)] = say('{{title}} is required', { title: variable.title || variable.name });
    } else if (variable.type === 'int' && !digitsOnly.test(value)) {
      errors[surveyField(variable)] = say('Must be integer');
    }
  }
  if (template.allow_override_args_in_task && values.arguments.trim() && !isJsonArray(values.arguments)) {
    errors.arguments = say('Arguments must be a JSON array');
  }
  return errors;
}

function isJsonArray(text: string): boolean {
  try {
    return Array.isArray(JSON.parse(text));
  } catch {
    return false;
  }
}

/**
 * The survey answers as the task's environment (a JSON object text): empty
 * answers are left out; every answer is text, as typed (an int keeps all
 * its digits, which a JSON number might not).
 */
export function surveyEnvironment(template: Template, survey: Record<string, string>): string {
  return JSON.stringify(answersOf(template, survey, false));
}

/**
 * The answers to secret survey variables, as the `secret` JSON text of
 * POST /tasks, or undefined when there are none. They never go into the
 * environment: the server keeps them in a Secret of the task's own, and
 * the task's environment (shown in History and read by Re-run) stays
 * free of them.
 */
export function surveySecret(template: Template, survey: Record<string, string>): string | undefined {
  const secret = answersOf(template, survey, true);
  return Object.keys(secret).length ? JSON.stringify(secret) : undefined;
}

/**
 * The body of POST /tasks for a valid form: the one place that says which
 * answers go where (secret ones in `secret`), so the new task dialog and
 * Run all (docs/features.md, issue #23) start tasks alike.
 */
export function newTaskRequest(template: Template, values: NewTaskValues): NewTask {
  const task: NewTask = {
    template_id: template.id,
    message: values.message.trim(),
    environment: surveyEnvironment(template, values.survey),
    debug: values.debug,
    dry_run: values.dryRun,
    diff: values.diff,
  };
  const secret = surveySecret(template, values.survey);
  if (secret) task.secret = secret;
  if (template.type === 'deploy') task.build_task_id = Number(values.buildTaskId);
  if (template.allow_override_args_in_task && values.arguments.trim()) task.arguments = values.arguments.trim();
  if (template.allow_override_branch_in_task && values.branch.trim()) task.git_branch = values.branch.trim();
  return task;
}

function answersOf(template: Template, survey: Record<string, string>, secret: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  for (const variable of template.survey_vars ?? []) {
    const value = (survey[variable.name] ?? '').trim();
    if (value && (variable.type === 'secret') === secret) out[variable.name] = value;
  }
  return out;
}

/** A task's environment JSON read back as survey answers (re-run). */
export function surveyAnswers(environment: string | null | undefined): Record<string, string> {
  try {
    const env: unknown = JSON.parse(environment || '{}');
    if (!env || typeof env !== 'object' || Array.isArray(env)) return {};
    return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
  } catch {
    return {};
  }
}
