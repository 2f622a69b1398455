import { useState, type FormEvent } from 'react';
import { ActionGroup, Alert, Button, Card, CardBody, Form, PageSection, Title } from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router-dom';
import { errorMessage } from '../../api/errors';
import { useNotify } from '../../app/Notifications';
import { useSession } from '../../app/SessionContext';
import { mayCreateProjects } from '../../app/session';
import { FormDisabledContext, SaveError } from '../../components/FormFields';
import { useLazyValidation } from '../../components/useLazyValidation';
import { ProjectFields, projectFormValues, projectRequest } from './ProjectForm';
import { projectHome } from './selection';
import { useCreateProject } from './useProjects';
import { validateProject } from './validation';

/** /project/new (docs/features.md §2): the project form, Create and Create Demo Project. */
export function NewProjectPage() {
  const { t } = useTranslation('projects');
  const { user } = useSession();
  const navigate = useNavigate();
  const notify = useNotify();
  const create = useCreateProject();
  const [values, setValues] = useState(projectFormValues);
  const { errors, check } = useLazyValidation(values, validateProject);
  const allowed = mayCreateProjects(user);

  // The demo is the same form with the demo flag (api-contract.md).
  const save = (demo: boolean) => {
    if (!check() || create.isPending) return;
    create.mutate(
      { ...projectRequest(values), ...(demo && { demo: true }) },
      {
        onSuccess: (project) => {
          notify.success(t('Project {{name}} created', { name: project.name }));
          navigate(projectHome(project));
        },
      },
    );
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save(false);
  };

  return (
    <PageSection>
      <Title headingLevel="h1" className="pf-v6-u-mb-lg">
        {t('New project')}
      </Title>
      <Card style={{ maxWidth: 600 }}>
        <CardBody>
          <Form onSubmit={submit} noValidate>
            {!allowed && (
              <Alert
                variant="info"
                isInline
                title={t('You cannot create projects. Ask an administrator to add you to a project.')}
              />
            )}
            <SaveError message={create.error ? errorMessage(create.error) : undefined} />
            <FormDisabledContext.Provider value={create.isPending || !allowed}>
              <ProjectFields values={values} errors={errors} onChange={setValues} />
            </FormDisabledContext.Provider>
            <ActionGroup>
              <Button type="submit" variant="primary" isDisabled={!allowed || create.isPending} isLoading={create.isPending && !create.variables?.demo}>
                {t('Create')}
              </Button>
              <Button variant="secondary" isDisabled={!allowed || create.isPending} isLoading={create.isPending && !!create.variables?.demo} onClick={() => save(true)}>
                {t('Create Demo Project')}
              </Button>
            </ActionGroup>
          </Form>
        </CardBody>
      </Card>
    </PageSection>
  );
}
