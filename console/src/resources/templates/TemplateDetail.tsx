import { Suspense, useState } from 'react';
import {
  Breadcrumb,
  BreadcrumbItem,
  Bullseye,
  Button,
  Card,
  CardBody,
  CardTitle,
  EmptyState,
  EmptyStateBody,
  Flex,
  FlexItem,
  PageSection,
  Spinner,
  Stack,
  StackItem,
  Title,
} from '@patternfly/react-core';
import ExclamationCircleIcon from '@patternfly/react-icons/dist/esm/icons/exclamation-circle-icon';
import { useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate } from 'react-router-dom';
import { errorMessage } from '../../api/errors';
import { queryKeys } from '../../api/queryKeys';
import { useNotify } from '../../app/Notifications';
import { Permission, useProjectAccess } from '../../app/permissions';
import { LazyDeleteResourceDialog as DeleteResourceDialog, LazyManaged } from '../../components/lazyDialogs';
import { TaskList } from '../tasks/TaskList';
import { AppIcon } from './AppIcon';
import { RunTemplateButton } from './RunTemplateButton';
import { TemplateSchedules } from './TemplateSchedules';
import { TemplateSettings } from './TemplateSettings';
import { useTemplate } from './useTemplates';

/**
 * /project/{id}/templates/{templateId}, also under a view (docs/features.md §2): the
 * template's settings, schedules and task history, with run, edit and
 * delete.
 */
export function TemplateDetail({ templateId, viewId }: { templateId: number; viewId?: number }) {
  const { t } = useTranslation('templates');
  const { project, can } = useProjectAccess();
  const navigate = useNavigate();
  const notify = useNotify();
  const queryClient = useQueryClient();
  const template = useTemplate(project.id, templateId);
  const [deleting, setDeleting] = useState(false);
  const list = viewId === undefined ? `/project/${project.id}/templates` : `/project/${project.id}/views/${viewId}/templates`;
  const manage = can(Permission.manageProjectResources);

  if (template.isPending) {
    return (
      <Bullseye style={{ minHeight: '50vh' }}>
        <Spinner aria-label={t('Loading')} />
      </Bullseye>
    );
  }
  if (template.isError) {
    return (
      <PageSection>
        <EmptyState headingLevel="h1" titleText={t('The template could not be loaded')} icon={ExclamationCircleIcon} status="danger">
          <EmptyStateBody>{errorMessage(template.error)}</EmptyStateBody>
          <Link to={list}>{t('Back to the templates')}</Link>
        </EmptyState>
      </PageSection>
    );
  }
  const tpl = template.data;
  const onDeleted = () => {
    notify.success(t('Template "{{name}}" deleted', { name: tpl.name }));
    queryClient.removeQueries({ queryKey: queryKeys.template(project.id, tpl.id) });
    void queryClient.invalidateQueries({ queryKey: queryKeys.templates(project.id) });
    navigate(list);
  };

  return (
    <PageSection>
      <Breadcrumb style={{ marginBottom: 'var(--pf-t--global--spacer--md)' }}>
        <BreadcrumbItem render={() => <Link to={list}>{t('Task Templates')}</Link>} />
        <BreadcrumbItem isActive>{tpl.name}</BreadcrumbItem>
      </Breadcrumb>
      <Flex justifyContent={{ default: 'justifyContentSpaceBetween' }} alignItems={{ default: 'alignItemsCenter' }} style={{ marginBottom: 'var(--pf-t--global--spacer--md)' }}>
        <Flex spaceItems={{ default: 'spaceItemsSm' }} alignItems={{ default: 'alignItemsCenter' }}>
          <FlexItem>
            <AppIcon app={tpl.app} />
          </FlexItem>
          <FlexItem>
            <Title headingLevel="h1">{tpl.name}</Title>
          </FlexItem>
        </Flex>
        <Flex spaceItems={{ default: 'spaceItemsSm' }}>
          <RunTemplateButton template={tpl} variant="primary" />
          {tpl.managed_by ? (
            <Suspense fallback={null}>
              <LazyManaged by={tpl.managed_by} part={manage ? 'buttons' : 'label'} />
            </Suspense>
          ) : (
            manage && (
              <>
                <Button variant="secondary" size="sm" onClick={() => navigate(`${list}/${tpl.id}/edit`)}>
                  {t('Edit')}
                </Button>
                <Button variant="secondary" size="sm" isDanger onClick={() => setDeleting(true)}>
                  {t('Delete')}
                </Button>
              </>
            )
          )}
        </Flex>
      </Flex>
      <Stack hasGutter>
        {tpl.description && (
          <StackItem>
            <p>{tpl.description}</p>
          </StackItem>
        )}
        <StackItem>
          <Card isCompact>
            <CardTitle component="h2">{t('Settings')}</CardTitle>
            <CardBody>
              <TemplateSettings template={tpl} />
            </CardBody>
          </Card>
        </StackItem>
        <StackItem>
          <Card isCompact>
            <CardTitle component="h2">{t('Schedules')}</CardTitle>
            <CardBody>
              <TemplateSchedules template={tpl} />
            </CardBody>
          </Card>
        </StackItem>
        <StackItem>
          <Card isCompact>
            <CardTitle component="h2">{t('Task history')}</CardTitle>
            <CardBody>
              <TaskList projectId={project.id} templateId={tpl.id} />
            </CardBody>
          </Card>
        </StackItem>
      </Stack>
      {deleting && (
        <Suspense fallback={null}>
          <DeleteResourceDialog
            kind="template"
            name={tpl.name}
            path={`/project/${project.id}/templates/${tpl.id}`}
            onDeleted={onDeleted}
            onClose={() => setDeleting(false)}
          />
        </Suspense>
      )}
    </PageSection>
  );
}
