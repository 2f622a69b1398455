import { useEffect } from 'react';
import { FormGroup, FormSelect, FormSelectOption } from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';
import { FieldError, TextField } from '../../components/FormFields';
import type { Errors } from '../../components/useLazyValidation';
import type { Template } from '../templates/types';
import type { Task } from './types';
import { useBuildTasks } from './useTasks';
import { surveyField, type NewTaskValues } from './validation';

/** What a template asks before a task starts: a deploy's build, and the survey. */
export type TaskAnswers = Pick<NewTaskValues, 'buildTaskId' | 'survey'>;

interface TaskAnswerFieldsProps {
  template: Template;
  values: TaskAnswers;
  onChange(patch: Partial<TaskAnswers>): void;
  errors: Errors;
  isDisabled?: boolean;
  /** Makes the fields' ids unique where several templates ask at once (Run all). */
  idPrefix?: string;
  /** Says why the builds could not be read. */
  onBuildsError?(error: Error | null): void;
}

/** How a build reads in the version list: its version, else its number, and its note. */
function buildLabel(task: Task): string {
  const name = task.version || `#${task.id}`;
  return task.message ? `${name} — ${task.message}` : name;
}

/**
 * A deploy's build version (its build template's successful builds, the
 * newest first and selected by default: docs/features.md §4) and the survey's
 * fields (§5): the new task dialog and Run all ask the same way.
 */
export function TaskAnswerFields({ template, values, onChange, errors, isDisabled, idPrefix = 'task', onBuildsError }: TaskAnswerFieldsProps) {
  const { t } = useTranslation('tasks');
  const isDeploy = template.type === 'deploy';
  const builds = useBuildTasks(template.project_id, isDeploy ? template.build_template_id : null);

  const firstBuild = builds.data?.[0]?.id;
  const hasBuild = !!values.buildTaskId;
  useEffect(() => {
    if (firstBuild !== undefined && !hasBuild) onChange({ buildTaskId: String(firstBuild) });
    // eslint-disable-next-line react-hooks/exhaustive-deps -- only a newly read build list picks the default
  }, [firstBuild]);
  useEffect(() => {
    onBuildsError?.(builds.error);
  }, [builds.error, onBuildsError]);

  return (
    <>
      {isDeploy && (
        <FormGroup label={t('Build version')} fieldId={`${idPrefix}-build`} isRequired>
          <FormSelect
            id={`${idPrefix}-build`}
            value={values.buildTaskId}
            onChange={(_event, id) => onChange({ buildTaskId: id })}
            validated={errors.buildTaskId ? 'error' : 'default'}
            isDisabled={isDisabled || builds.isPending}
            aria-label={t('Build version')}
          >
            <FormSelectOption
              value=""
              label={builds.isPending ? t('Loading builds…') : builds.data?.length ? t('Select a build') : t('No successful builds')}
              isPlaceholder
            />
            {builds.data?.map((build) => (
              <FormSelectOption key={build.id} value={String(build.id)} label={buildLabel(build)} />
            ))}
          </FormSelect>
          <FieldError error={errors.buildTaskId} />
        </FormGroup>
      )}
      {(template.survey_vars ?? []).map((variable) => (
        <TextField
          key={variable.name}
          id={`${idPrefix}-survey-${variable.name}`}
          label={variable.title || variable.name}
          value={values.survey[variable.name] ?? ''}
          onChange={(value) => onChange({ survey: { ...values.survey, [variable.name]: value } })}
          error={errors[surveyField(variable)]}
          isRequired={variable.required}
          inputMode={variable.type === 'int' ? 'numeric' : undefined}
          type={variable.type === 'secret' ? 'password' : undefined}
          autoComplete={variable.type === 'secret' ? 'off' : undefined}
          helper={variable.description || undefined}
        />
      ))}
    </>
  );
}
