// Run all (issue #23 item 3, Semaphore's #1935): a view's templates, each
// started as its own task through POST /project/{id}/tasks, in the view's
// order. The console loops over the one door that starts tasks rather than
// calling a route of its own, so a run of a view is exactly a run of each
// template: the same permission (runProjectTasks), the same checks of the
// survey and the build, the same secret handling, and a failure of one
// template is that template's alone (docs/features.md, "Beyond the anchors").
import { errorMessage } from '../../api/errors';
import type { Errors } from '../../components/useLazyValidation';
import type { TaskAnswers } from '../tasks/TaskAnswerFields';
import type { Task } from '../tasks/types';
import type { NewTask } from '../tasks/useTasks';
import { english, newTaskRequest, validateNewTask, type NewTaskValues, type Say } from '../tasks/validation';
import type { Template } from '../templates/types';

/**
 * Whether a template must ask before it starts: a deploy picks a build
 * version, and a survey with a required variable needs its answer. Optional
 * variables alone do not stop a template from starting as it is.
 */
export function asks(template: Template): boolean {
  return template.type === 'deploy' || (template.survey_vars ?? []).some((v) => v.required);
}

/** The templates that ask (listed first in the dialog) and the others, each in the view's order. */
export function splitByQuestions(templates: Template[]): { asking: Template[]; direct: Template[] } {
  return { asking: templates.filter(asks), direct: templates.filter((t) => !asks(t)) };
}

/** The answers as the new task form's values: no message, no options, the template's own defaults. */
function formValues(answers: TaskAnswers | undefined): NewTaskValues {
  return {
    buildTaskId: answers?.buildTaskId ?? '',
    survey: answers?.survey ?? {},
    message: '',
    debug: false,
    dryRun: false,
    diff: false,
    arguments: '',
    branch: '',
  };
}

/** Each asking template's complaints, by template id; only templates with some are listed. */
export function validateRunAll(
  asking: Template[],
  answers: Record<number, TaskAnswers>,
  say: Say = english,
): Record<number, Errors> {
  const out: Record<number, Errors> = {};
  for (const template of asking) {
    const errors = validateNewTask(formValues(answers[template.id]), template, say);
    if (Object.keys(errors).length) out[template.id] = errors;
  }
  return out;
}

/** What became of one template: its new task, or why it did not start, or that it was left out. */
export type RunResult =
  | { template: Template; task: Task }
  | { template: Template; error: string }
  | { template: Template; skipped: true };

/**
 * Starts the templates one after the other, in the view's order (so their
 * task numbers follow it), leaving out the skipped ones. A refusal is
 * recorded with the server's message and the rest still start: a view is a
 * list of independent templates, not a pipeline.
 */
export async function startAll(
  templates: Template[],
  answers: Record<number, TaskAnswers>,
  skipped: ReadonlySet<number>,
  start: (task: NewTask) => Promise<Task>,
  onResult: (result: RunResult) => void = () => {},
): Promise<RunResult[]> {
  const results: RunResult[] = [];
  for (const template of templates) {
    let result: RunResult;
    if (skipped.has(template.id)) {
      result = { template, skipped: true };
    } else {
      try {
        result = { template, task: await start(newTaskRequest(template, formValues(answers[template.id]))) };
      } catch (error) {
        result = { template, error: errorMessage(error) };
      }
    }
    results.push(result);
    onResult(result);
  }
  return results;
}
