import { Suspense, useState, type FormEvent } from 'react';
import {
  ActionGroup,
  Breadcrumb,
  BreadcrumbItem,
  Bullseye,
  Button,
  EmptyState,
  EmptyStateBody,
  Form,
  PageSection,
  Spinner,
  Title,
} from '@patternfly/react-core';
import ExclamationCircleIcon from '@patternfly/react-icons/dist/esm/icons/exclamation-circle-icon';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useSearchParams } from 'react-router-dom';
import { errorMessage } from '../../api/errors';
import { useProjectAccess } from '../../app/permissions';
import { FormDisabledContext, SaveError } from '../../components/FormFields';
import { useLazyValidation } from '../../components/useLazyValidation';
import { LazyTaskPodsFields } from '../taskpods/lazy';
import { emptyTemplateValues, templateValues } from './formValues';
import { TemplateFormFields } from './TemplateFormFields';
import type { Schedule, Template } from './types';
import { CronError, useSaveTemplate } from './useSaveTemplate';
import { useTemplate, useTemplateSchedules } from './useTemplates';
import { validateTemplate, type TemplateField, type TemplateFormValues } from './validation';

/**
 * …/templates/new/edit and …/templates/{id}/edit (docs/features.md §2): one form for
 * a new template and an existing one. It waits for the template and its
 * schedules before showing the form, so the form starts from saved values.
 */
export function TemplateEditor({ templateId, viewId }: { templateId?: number; viewId?: number }) {
  const { t } = useTranslation('templates');
  const { project } = useProjectAccess();
  const template = useTemplate(project.id, templateId);
  const schedules = useTemplateSchedules(project.id, templateId);
  const list = viewId === undefined ? `/project/${project.id}/templates` : `/project/${project.id}/views/${viewId}/templates`;

  if (templateId !== undefined && (template.isPending || schedules.isPending)) {
    return (
      <Bullseye style={{ minHeight: '50vh' }}>
        <Spinner aria-label={t('Loading')} />
      </Bullseye>
    );
  }
  const failure = template.error ?? schedules.error;
  if (failure) {
    return (
      <PageSection>
        <EmptyState headingLevel="h1" titleText={t('The template could not be loaded')} icon={ExclamationCircleIcon} status="danger">
          <EmptyStateBody>{errorMessage(failure)}</EmptyStateBody>
          <Link to={list}>{t('Back to the templates')}</Link>
        </EmptyState>
      </PageSection>
    );
  }
  return <EditorForm existing={template.data} schedule={schedules.data?.[0]} list={list} viewId={viewId} />;
}

/** The field of each rule, in the order the form shows them. */
const fieldIds: Record<TemplateField, string> = {
  name: 'template-name',
  repositoryId: 'template-repository',
  playbook: 'template-playbook',
  environmentId: 'template-environment',
  startVersion: 'template-start-version',
  buildTemplateId: 'template-build-template',
  arguments: 'template-arguments',
};

// The form is long: a failed save takes the user to the first complaint.
function focusFirstError(values: TemplateFormValues) {
  const errors = validateTemplate(values);
  const first = (Object.keys(fieldIds) as TemplateField[]).find((field) => errors[field]);
  if (first) document.getElementById(fieldIds[first])?.focus();
}

interface EditorFormProps {
  existing?: Template;
  schedule?: Schedule;
  list: string;
  viewId?: number;
}

function EditorForm({ existing, schedule, list, viewId }: EditorFormProps) {
  const { t } = useTranslation('templates');
  const { project } = useProjectAccess();
  const navigate = useNavigate();
  const [search] = useSearchParams();
  const [values, setValues] = useState<TemplateFormValues>(() =>
    existing ? templateValues(existing, schedule) : emptyTemplateValues(search.get('app') ?? '', viewId),
  );
  const { errors, check } = useLazyValidation(values, validateTemplate);
  const save = useSaveTemplate(project.id);
  const cronError = save.error instanceof CronError ? save.error.message : undefined;
  const formError = save.error && !(save.error instanceof CronError) ? errorMessage(save.error) : undefined;
  const set = <K extends keyof TemplateFormValues>(key: K, value: TemplateFormValues[K]) => setValues((v) => ({ ...v, [key]: value }));
  const back = existing ? `${list}/${existing.id}` : list;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    // A survey variable's dialog is a form of its own whose submit bubbles
    // here through React's tree: only this form's own submit saves.
    if (event.target !== event.currentTarget || save.isPending) return;
    if (!check()) {
      focusFirstError(values);
      return;
    }
    save.mutate({ values, existing, schedule }, { onSuccess: (id) => navigate(`${list}/${id}`) });
  };

  return (
    <PageSection>
      <Breadcrumb style={{ marginBottom: 'var(--pf-t--global--spacer--md)' }}>
        <BreadcrumbItem render={() => <Link to={list}>{t('Task Templates')}</Link>} />
        {existing && <BreadcrumbItem render={() => <Link to={back}>{existing.name}</Link>} />}
        <BreadcrumbItem isActive>{existing ? t('Edit') : t('New template')}</BreadcrumbItem>
      </Breadcrumb>
      <Title headingLevel="h1" style={{ marginBottom: 'var(--pf-t--global--spacer--md)' }}>
        {existing ? t('Edit template') : t('New template')}
      </Title>
      <Form onSubmit={submit} noValidate style={{ maxWidth: 960 }} aria-label={existing ? t('Edit template') : t('New template')}>
        <FormDisabledContext.Provider value={save.isPending}>
          <TemplateFormFields values={values} set={set} errors={errors} cronError={cronError} templateId={existing?.id} scheduleManagedBy={schedule?.managed_by} />
          <Suspense fallback={null}>
            <LazyTaskPodsFields scope="template" value={values.taskPods} onChange={(v) => set('taskPods', v)} />
          </Suspense>
        </FormDisabledContext.Provider>
        <SaveError message={formError} />
        <ActionGroup>
          <Button type="submit" variant="primary" isLoading={save.isPending} isDisabled={save.isPending}>
            {existing ? t('Save') : t('Create')}
          </Button>
          <Button variant="link" onClick={() => navigate(back)} isDisabled={save.isPending}>
            {t('Cancel')}
          </Button>
        </ActionGroup>
      </Form>
    </PageSection>
  );
}
