import { Suspense, useState, type FormEvent } from 'react';
import {
  ActionGroup,
  Button,
  Card,
  CardBody,
  CardTitle,
  Content,
  Form,
  PageSection,
  Stack,
  Title,
} from '@patternfly/react-core';
import DownloadIcon from '@patternfly/react-icons/dist/esm/icons/download-icon';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router-dom';
import { errorMessage } from '../../api/errors';
import { useNotify } from '../../app/Notifications';
import { useProjectAccess } from '../../app/permissions';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { FormDisabledContext, SaveError } from '../../components/FormFields';
import { LazyManaged } from '../../components/lazyDialogs';
import { useLazyValidation } from '../../components/useLazyValidation';
import { ProjectFields, projectFormValues, projectRequest } from './ProjectForm';
import { LazyProjectTaskPodsCard } from '../taskpods/lazy';
import { projectHome } from './selection';
import { downloadBackup, useDeleteProject, useProjects, useUpdateProject } from './useProjects';
import { validateProject } from './validation';

/** /project/{id}/settings (docs/features.md §2): edit, back up and delete the project. */
export function ProjectSettingsPage() {
  const { t } = useTranslation('projects');
  const { project } = useProjectAccess();
  return (
    <PageSection>
      <Title headingLevel="h1" className="pf-v6-u-mb-lg">
        {t('Project settings')}
      </Title>
      {project.managed_by && (
        <Suspense fallback={null}>
          <LazyManaged by={project.managed_by} part="notice" />
        </Suspense>
      )}
      <Stack hasGutter style={{ maxWidth: 600 }}>
        <EditProject key={project.id} />
        <Suspense fallback={null}>
          <LazyProjectTaskPodsCard key={project.id} />
        </Suspense>
        <BackupProject />
        <DeleteProject />
      </Stack>
    </PageSection>
  );
}

function EditProject() {
  const { t } = useTranslation('projects');
  const { project } = useProjectAccess();
  const notify = useNotify();
  const update = useUpdateProject(project.id);
  const [values, setValues] = useState(() => projectFormValues(project));
  const { errors, check } = useLazyValidation(values, validateProject);
  const managed = Boolean(project.managed_by);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!check() || update.isPending) return;
    const request = projectRequest(values);
    update.mutate(request, {
      onSuccess: () => notify.success(t('Project {{name}} saved', { name: request.name })),
    });
  };
  return (
    <Card>
      <CardBody>
        <Form onSubmit={submit} noValidate>
          <SaveError message={update.error ? errorMessage(update.error) : undefined} />
          <FormDisabledContext.Provider value={update.isPending || managed}>
            <ProjectFields values={values} errors={errors} onChange={setValues} />
          </FormDisabledContext.Provider>
          <ActionGroup>
            <Button type="submit" variant="primary" isLoading={update.isPending} isDisabled={update.isPending || managed}>
              {t('Save')}
            </Button>
          </ActionGroup>
        </Form>
      </CardBody>
    </Card>
  );
}

function BackupProject() {
  const { t } = useTranslation('projects');
  const { project } = useProjectAccess();
  const notify = useNotify();
  const [busy, setBusy] = useState(false);
  const backUp = async () => {
    setBusy(true);
    try {
      await downloadBackup(project.id);
    } catch (error) {
      notify.error(error);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Card>
      <CardTitle component="h2">{t('Backup')}</CardTitle>
      <CardBody>
        <Content component="p">
          {t('Download the project’s templates, inventories, environments, repositories, views, integrations and key names as a JSON file. Secrets are not included.')}
        </Content>
        <Button variant="secondary" icon={<DownloadIcon />} onClick={() => void backUp()} isLoading={busy} isDisabled={busy}>
          {t('Back up project')}
        </Button>
      </CardBody>
    </Card>
  );
}

function DeleteProject() {
  const { t } = useTranslation('projects');
  const { project } = useProjectAccess();
  const notify = useNotify();
  const navigate = useNavigate();
  const remove = useDeleteProject(project.id);
  const projects = useProjects().data ?? [];
  const [confirming, setConfirming] = useState(false);

  const confirm = () =>
    remove.mutate(undefined, {
      onSuccess: () => {
        notify.success(t('Project {{name}} deleted', { name: project.name }));
        // The first remaining project is selected (docs/features.md §4).
        const next = projects.find((p) => p.id !== project.id);
        navigate(next ? projectHome(next) : '/project/new', { replace: true });
      },
      onError: (error) => {
        setConfirming(false);
        notify.error(error);
      },
    });

  return (
    <Card>
      <CardTitle component="h2">{t('Delete project')}</CardTitle>
      <CardBody>
        <Content component="p">{t('Deleting a project deletes everything in it. This cannot be undone.')}</Content>
        <Button variant="danger" onClick={() => setConfirming(true)} isDisabled={Boolean(project.managed_by)}>
          {t('Delete project')}
        </Button>
      </CardBody>
      <ConfirmDialog
        title={t('Delete project')}
        confirmLabel={t('Delete')}
        isOpen={confirming}
        isBusy={remove.isPending}
        onConfirm={confirm}
        onClose={() => setConfirming(false)}
      >
        {t('Are you sure you want to delete the project {{name}} and everything in it?', { name: project.name })}
      </ConfirmDialog>
    </Card>
  );
}
