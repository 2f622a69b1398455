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

/** The project's fields (docs/features.md §3): name, max parallel tasks, alert, alert chat. */
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
      <CheckboxField
        id="project-alert"
        label={t('Allow alerts for this project')}
        checked={values.alert}
        onChange={set('alert')}
        description={t('When a task of this project fails, or succeeds and its template does not suppress success alerts, every team member with “Send alerts” on gets an email with the project, template, status and version, who started the task, when, how long it ran, its message, the last 20 lines of output and a link to the task. Stopped tasks send no alert unless the administrator turned that on.')}
      />
      <TextField
        id="project-alert-chat"
        label={t('Chat ID for alerts (optional)')}
        value={values.alertChat}
        onChange={set('alertChat')}
        helper={t('With alerts allowed, the same alert without the output also goes to this chat (a Telegram chat ID). If the administrator set up a Slack or Mattermost webhook instead, any value here turns those messages on.')}
      />
    </>
  );
}
