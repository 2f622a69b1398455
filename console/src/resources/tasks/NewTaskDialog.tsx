import { useState } from 'react';
import { FormGroup, TextArea } from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';
import { useSearchParams } from 'react-router-dom';
import { errorMessage } from '../../api/errors';
import { FormDialog } from '../../components/FormDialog';
import { CheckboxField, FieldError, TextField } from '../../components/FormFields';
import { useLazyValidation } from '../../components/useLazyValidation';
import type { Template } from '../templates/types';
import { useTaskAction } from './taskAction';
import type { Task } from './types';
import { TaskAnswerFields } from './TaskAnswerFields';
import { useStartTask } from './useTasks';
import { newTaskRequest, surveyAnswers, validateNewTask, type NewTaskValues } from './validation';

export interface NewTaskDialogProps {
  template: Template;
  /** Re-run: the task whose settings fill the form; the title gets the "Re" prefix. */
  rerunOf?: Task;
  onClose(): void;
}

function initialValues(rerunOf?: Task): NewTaskValues {
  return {
    buildTaskId: rerunOf?.build_task_id ? String(rerunOf.build_task_id) : '',
    survey: surveyAnswers(rerunOf?.environment),
    message: rerunOf?.message ?? '',
    debug: rerunOf?.debug ?? false,
    dryRun: rerunOf?.dry_run ?? false,
    diff: rerunOf?.diff ?? false,
    arguments: rerunOf?.arguments && rerunOf.arguments !== '[]' ? rerunOf.arguments : '',
    branch: rerunOf?.git_branch ?? '',
  };
}

/**
 * The new task dialog (docs/features.md §4, §5): a deploy picks one of its build
 * template's successful builds (the newest first, selected by default),
 * the survey is filled in, and run options set. On success the new task's
 * log opens (the `t` query parameter).
 */
export function NewTaskDialog({ template, rerunOf, onClose }: NewTaskDialogProps) {
  const { t } = useTranslation('tasks');
  const [, setSearchParams] = useSearchParams();
  const start = useStartTask(template.project_id);
  const [buildsError, setBuildsError] = useState<Error | null>(null);
  const [values, setValues] = useState<NewTaskValues>(() => initialValues(rerunOf));
  const say = (key: string, vars?: Record<string, string>) => t(key, vars);
  const { errors, check } = useLazyValidation(values, (v) => validateNewTask(v, template, say));
  const set = <K extends keyof NewTaskValues>(key: K, value: NewTaskValues[K]) => setValues((v) => ({ ...v, [key]: value }));

  const onSave = () => {
    if (!check()) return;
    const task = newTaskRequest(template, values);
    start.mutate(task, {
      onSuccess: (created) => {
        onClose();
        setSearchParams((params) => {
          params.set('t', String(created.id));
          return params;
        });
      },
    });
  };

  const action = useTaskAction()(template.type, !!rerunOf);
  const failure = start.error ?? buildsError;
  return (
    <FormDialog
      title={t('{{action}} {{template}}', { action, template: template.name })}
      saveLabel={action}
      isOpen
      onClose={onClose}
      onSave={onSave}
      isSaving={start.isPending}
      error={failure ? errorMessage(failure) : undefined}
      maxWidth={640}
    >
      <TaskAnswerFields
        template={template}
        values={values}
        onChange={(patch) => setValues((v) => ({ ...v, ...patch }))}
        errors={errors}
        isDisabled={start.isPending}
        onBuildsError={setBuildsError}
      />
      <TextField id="task-message" label={t('Message')} value={values.message} onChange={(v) => set('message', v)} />
      {template.allow_override_args_in_task && (
        <FormGroup label={t('Arguments')} fieldId="task-arguments">
          <TextArea
            id="task-arguments"
            value={values.arguments}
            onChange={(_event, v) => set('arguments', v)}
            placeholder='["--tags", "web"]'
            validated={errors.arguments ? 'error' : 'default'}
            isDisabled={start.isPending}
            resizeOrientation="vertical"
            style={{ fontFamily: 'var(--pf-t--global--font--family--mono)' }}
          />
          <FieldError error={errors.arguments} />
        </FormGroup>
      )}
      {template.allow_override_branch_in_task && (
        <TextField
          id="task-branch"
          label={t('Branch')}
          value={values.branch}
          onChange={(v) => set('branch', v)}
          helper={t('Leave empty to use the branch of the template or its repository.')}
        />
      )}
      <CheckboxField id="task-debug" label={t('Debug')} checked={values.debug} onChange={(v) => set('debug', v)} />
      <CheckboxField id="task-dry-run" label={t('Dry run')} checked={values.dryRun} onChange={(v) => set('dryRun', v)} />
      <CheckboxField id="task-diff" label={t('Diff')} checked={values.diff} onChange={(v) => set('diff', v)} />
    </FormDialog>
  );
}
