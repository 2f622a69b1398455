import { lazy, useEffect, useState } from 'react';
import {
  Bullseye,
  Button,
  EmptyState,
  EmptyStateBody,
  Flex,
  FlexItem,
  PageSection,
  Spinner,
  Tab,
  Tabs,
  TabTitleText,
  Title,
} from '@patternfly/react-core';
import CubesIcon from '@patternfly/react-icons/dist/esm/icons/cubes-icon';
import ExclamationCircleIcon from '@patternfly/react-icons/dist/esm/icons/exclamation-circle-icon';
import PencilAltIcon from '@patternfly/react-icons/dist/esm/icons/pencil-alt-icon';
import { useTranslation } from 'react-i18next';
import { Navigate, useLocation, useNavigate } from 'react-router-dom';
import { errorMessage } from '../../api/errors';
import { Loading } from '../../app/lazyPages';
import { Permission, useProjectAccess } from '../../app/permissions';
import { lastView, rememberView } from '../../settings/settings';
import { useViews, useViewTemplates } from '../views/useViews';
import { ColumnSettings } from './ColumnSettings';
import { columnTitles, templateColumns, useHiddenColumns } from './columns';
import { NewTemplateMenu } from './NewTemplateMenu';
import { TemplateTable } from './TemplateTable';
import { useTemplates } from './useTemplates';

// The views dialog (with its drag and drop) loads when first opened.
const EditViewsDialog = lazy(async () => ({ default: (await import('../views/EditViewsDialog')).EditViewsDialog }));
// Run all's dialog, its words and its loop load when asked for (issue #23).
const RunAllDialog = lazy(async () => ({ default: (await import('../views/RunAllDialog')).RunAllDialog }));

/** The state a tab link carries: the user chose "All", so no redirect to the last view. */
const chosen = { allChosen: true };

/**
 * /project/{id}/templates and /project/{id}/views/{viewId}/templates
 * (docs/features.md §2): the template list under view tabs. Opening the templates
 * without a view goes to the view last open (docs/features.md §9).
 */
export function TemplateList({ viewId }: { viewId?: number }) {
  const { t } = useTranslation('templates');
  const { project, can } = useProjectAccess();
  const navigate = useNavigate();
  const location = useLocation();
  const views = useViews(project.id);
  const all = useTemplates(project.id, viewId === undefined);
  const inView = useViewTemplates(project.id, viewId);
  const templates = viewId === undefined ? all : inView;
  const [hidden, setHidden] = useHiddenColumns('templates', templateColumns);
  const [editingViews, setEditingViews] = useState(false);
  const [runningAll, setRunningAll] = useState(false);
  const manage = can(Permission.manageProjectResources);
  const remembered = lastView(project.id);
  const allChosen = (location.state as typeof chosen | null)?.allChosen === true;
  const viewExists = (id: number | undefined) => id !== undefined && views.data?.some((v) => v.id === id);
  const view = viewId === undefined ? undefined : views.data?.find((v) => v.id === viewId);
  const canRunAll = view && can(Permission.runProjectTasks) && !!templates.data?.length;

  useEffect(() => {
    if (viewId !== undefined ? viewExists(viewId) : allChosen) rememberView(project.id, viewId ?? null);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- only a change of view or of the views counts
  }, [project.id, viewId, allChosen, views.data]);

  // The last view, unless the user chose All or the view is gone.
  if (viewId === undefined && !allChosen && remembered !== undefined && views.data && viewExists(remembered)) {
    return <Navigate to={`/project/${project.id}/views/${remembered}/templates`} replace />;
  }
  // A view deleted meanwhile, or a mistyped address: back to All.
  if (viewId !== undefined && views.data && !viewExists(viewId)) {
    return <Navigate to={`/project/${project.id}/templates`} state={chosen} replace />;
  }

  const base = viewId === undefined ? `/project/${project.id}/templates` : `/project/${project.id}/views/${viewId}/templates`;
  const selectTab = (key: string | number) => {
    if (key === 'all') navigate(`/project/${project.id}/templates`, { state: chosen });
    else navigate(`/project/${project.id}/views/${key}/templates`);
  };

  return (
    <PageSection>
      <Flex justifyContent={{ default: 'justifyContentSpaceBetween' }} alignItems={{ default: 'alignItemsCenter' }} style={{ marginBottom: 'var(--pf-t--global--spacer--md)' }}>
        <FlexItem>
          <Title headingLevel="h1">{t('Task Templates')}</Title>
        </FlexItem>
        <Flex spaceItems={{ default: 'spaceItemsSm' }}>
          <ColumnSettings columns={templateColumns} titles={columnTitles} hidden={hidden} onChange={setHidden} />
          {manage && <NewTemplateMenu projectId={project.id} />}
        </Flex>
      </Flex>
      <Flex alignItems={{ default: 'alignItemsCenter' }} flexWrap={{ default: 'nowrap' }} style={{ marginBottom: 'var(--pf-t--global--spacer--md)' }}>
        <FlexItem grow={{ default: 'grow' }} style={{ minWidth: 0 }}>
          <Tabs activeKey={viewId ?? 'all'} onSelect={(_event, key) => selectTab(key)} aria-label={t('Views')} inset={{ default: 'insetNone' }}>
            {[
              <Tab key="all" eventKey="all" title={<TabTitleText>{t('All')}</TabTitleText>} />,
              ...(views.data ?? []).map((view) => (
                <Tab key={view.id} eventKey={view.id} title={<TabTitleText>{view.title}</TabTitleText>} />
              )),
            ]}
          </Tabs>
        </FlexItem>
        {canRunAll && (
          <FlexItem>
            <Button variant="secondary" size="sm" onClick={() => setRunningAll(true)}>
              {t('Run all')}
            </Button>
          </FlexItem>
        )}
        {manage && (
          <FlexItem>
            <Button variant="plain" icon={<PencilAltIcon />} aria-label={t('Edit views')} onClick={() => setEditingViews(true)} isDisabled={!views.data} />
          </FlexItem>
        )}
      </Flex>
      {views.isError && <p style={{ color: 'var(--pf-t--global--text--color--status--danger--default)', marginBottom: 'var(--pf-t--global--spacer--md)' }}>{errorMessage(views.error)}</p>}
      {templates.isPending && (
        <Bullseye>
          <Spinner aria-label={t('Loading')} />
        </Bullseye>
      )}
      {templates.isError && (
        <EmptyState headingLevel="h2" titleText={t('The templates could not be loaded')} icon={ExclamationCircleIcon} status="danger">
          <EmptyStateBody>{errorMessage(templates.error)}</EmptyStateBody>
        </EmptyState>
      )}
      {templates.data?.length === 0 && (
        <EmptyState headingLevel="h2" titleText={viewId === undefined ? t('No templates yet') : t('No templates in this view')} icon={CubesIcon}>
          <EmptyStateBody>
            {viewId === undefined
              ? manage
                ? t('Create one with New template.')
                : t('Ask a project manager to create one.')
              : t('Choose this view in a template’s settings to list it here.')}
          </EmptyStateBody>
        </EmptyState>
      )}
      {templates.data && templates.data.length > 0 && (
        <div style={{ overflowX: 'auto' }}>
          <TemplateTable projectId={project.id} templates={templates.data} hidden={hidden} base={base} />
        </div>
      )}
      {runningAll && view && templates.data && (
        <Loading>
          <RunAllDialog projectId={project.id} viewTitle={view.title} templates={templates.data} onClose={() => setRunningAll(false)} />
        </Loading>
      )}
      {editingViews && views.data && (
        <Loading>
          <EditViewsDialog projectId={project.id} views={views.data} onClose={() => setEditingViews(false)} />
        </Loading>
      )}
    </PageSection>
  );
}
