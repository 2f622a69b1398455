import { CheckboxField, TextField } from '../../components/FormFields';
import type { Errors } from '../../components/useLazyValidation';
import { useTranslation } from 'react-i18next';
import type { Project, ProjectRequest } from './types';
import type { ProjectFormValues } from './validation';

export function projectFormValues(project?: Project): ProjectFormValues {
  return {
    name: project?.name ?? '',
    alert: project?.alert ?? false,
    alertChat: project?.alert_chat ?? '',
    maxParallelTasks: project ? String(project.max_parallel_tasks) : '',
  };
}

/** The request for validated form values. */
export function projectRequest(values: ProjectFormValues): ProjectRequest {
  const chat = values.alertChat.trim();
  return {
    name: values.name.trim(),
    alert: values.alert,
    alert_chat: chat === '' ? null : chat,
    max_parallel_tasks: values.maxParallelTasks.trim() === '' ? 0 : Number(values.maxParallelTasks),
  };
}

interface ProjectFieldsProps {
  values: ProjectFormValues;
  errors: Errors<'name' | 'maxParallelTasks'>;
  onChange(values: ProjectFormValues): void;
}

/** The project's fields (spec §3): name, max parallel tasks, alert, alert chat. */
export function ProjectFields({ values, errors, onChange }: ProjectFieldsProps) {
  const { t } = useTranslation('projects');
  const set = <K extends keyof ProjectFormValues>(key: K) => (value: ProjectFormValues[K]) =>
    onChange({ ...values, [key]: value });
  return (
    <>
      <TextField
        id="project-name"
        label={t('Project name')}
        value={values.name}
        onChange={set('name')}
        error={errors.name}
        isRequired
        autoFocus
      />
      <TextField
        id="project-max-parallel-tasks"
        label={t('Max parallel tasks')}
        value={values.maxParallelTasks}
        onChange={set('maxParallelTasks')}
        error={errors.maxParallelTasks}
        inputMode="numeric"
        helper={t('0 or empty means unlimited.')}
      />
      <CheckboxField id="project-alert" label={t('Allow alerts for this project')} checked={values.alert} onChange={set('alert')} />
      <TextField
        id="project-alert-chat"
        label={t('Chat ID for alerts (optional)')}
        value={values.alertChat}
        onChange={set('alertChat')}
      />
    </>
  );
}
