import { useEffect, useMemo } from 'react';
import { Alert, Bullseye, EmptyState, EmptyStateBody, PageSection, Spinner } from '@patternfly/react-core';
import ExclamationCircleIcon from '@patternfly/react-icons/dist/esm/icons/exclamation-circle-icon';
import { useTranslation } from 'react-i18next';
import { Navigate, Route, Routes, useParams } from 'react-router-dom';
import { errorMessage } from '../api/errors';
import { projectHome } from '../resources/projects/selection';
import { useProjectRole, useProjects } from '../resources/projects/useProjects';
import { rememberProject } from '../settings/settings';
import {
  ActivityPage,
  EnvironmentsPage,
  HistoryPage,
  IntegrationPage,
  IntegrationsPage,
  InventoriesPage,
  KeysPage,
  Loading,
  ProjectSettingsPage,
  RepositoriesPage,
  TaskLogHost,
  TeamPage,
  TemplateRoutes,
} from './lazyPages';
import { accessNotice, Permission, ProjectAccessContext, projectAccess } from './permissions';
import { useSession } from './SessionContext';

/** The pages of one project, /project/{id}/…, with the user's access to it. */
export function ProjectRoutes() {
  const { t } = useTranslation();
  const { user } = useSession();
  const projectId = Number(useParams().projectId);
  const project = useProjects().data?.find((p) => p.id === projectId);
  const role = useProjectRole(projectId);
  const access = useMemo(
    () => project && role.data && projectAccess(project, user, role.data.role, role.data.permissions),
    [project, role.data, user],
  );

  useEffect(() => {
    if (project) rememberProject(project.id);
  }, [project]);

  // Not one of the user's projects (deleted, left, or a mistyped address):
  // the base page picks the project to show.
  if (!project) return <Navigate to="/" replace />;
  if (role.isError) {
    return (
      <PageSection>
        <EmptyState headingLevel="h1" titleText={t('The project could not be loaded')} icon={ExclamationCircleIcon} status="danger">
          <EmptyStateBody>{errorMessage(role.error)}</EmptyStateBody>
        </EmptyState>
      </PageSection>
    );
  }
  if (!access) {
    return (
      <Bullseye>
        <Spinner aria-label={t('Loading')} />
      </Bullseye>
    );
  }
  const notice = accessNotice(access);
  return (
    <ProjectAccessContext.Provider value={access}>
      {notice && (
        <PageSection padding={{ default: 'noPadding' }} className="pf-v6-u-px-lg pf-v6-u-pt-md">
          <Alert
            variant="info"
            isInline
            isPlain
            data-testid="access-notice"
            title={notice === 'read-only' ? t('You have read-only access') : t('You can run any tasks')}
          />
        </PageSection>
      )}
      <Loading>
        <Routes>
          <Route index element={<Navigate to={projectHome(project)} replace />} />
          <Route path="activity" element={<ActivityPage />} />
          <Route path="team" element={<TeamPage />} />
          <Route
            path="settings"
            element={access.can(Permission.updateProject) ? <ProjectSettingsPage /> : <Navigate to={projectHome(project)} replace />}
          />
          {/* The resource screens exist only in normal projects (docs/features.md §2). */}
          {project.type === '' && (
            <>
              <Route path="history" element={<HistoryPage />} />
              <Route path="templates/*" element={<TemplateRoutes />} />
              <Route path="views/*" element={<TemplateRoutes />} />
              <Route path="inventory" element={<InventoriesPage />} />
              <Route path="environment" element={<EnvironmentsPage />} />
              <Route path="keys" element={<KeysPage />} />
              <Route path="repositories" element={<RepositoriesPage />} />
              <Route path="integrations" element={<IntegrationsPage />} />
              <Route path="integration/:integrationId" element={<IntegrationPage />} />
            </>
          )}
          <Route path="*" element={<Navigate to={projectHome(project)} replace />} />
        </Routes>
        {/* ?t={taskId} opens the task log on any page of the project (docs/features.md §2). */}
        <TaskLogHost />
      </Loading>
    </ProjectAccessContext.Provider>
  );
}
