import { useEffect, useMemo } from 'react';
import { Bullseye, Spinner } from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';
import { Navigate, Route, Routes, useLocation } from 'react-router-dom';
import { ApiError } from '../api/client';
import { errorMessage } from '../api/errors';
import { useInfo } from '../api/useInfo';
import { projectHome, selectProject } from '../resources/projects/selection';
import { useProjects } from '../resources/projects/useProjects';
import { lastProject } from '../settings/settings';
import { Loading, NewProjectPage, ProjectPages, UsersPage } from './lazyPages';
import { SessionContext } from './SessionContext';
import { clearSessionCookie, hasSessionCookie, useCurrentUser } from './session';
import { StartupError } from './StartupError';

/** The console's app states (docs/features.md §4): loading, then success or error. */
export function SignedInApp() {
  const { search } = useLocation();
  // No session cookie: straight to sign-in, keeping the query string.
  if (!hasSessionCookie()) return <Navigate to={`/auth/login${search}`} replace />;
  return <Startup />;
}

function Startup() {
  const { t } = useTranslation();
  const info = useInfo();
  const user = useCurrentUser();
  const projects = useProjects();
  const failed = [info, user, projects].find((q) => q.isError)?.error;
  const signedOut = failed instanceof ApiError && failed.status === 401;

  useEffect(() => {
    // The marker outlived the session (expired, revoked): forget it.
    if (signedOut) clearSessionCookie();
  }, [signedOut]);

  const session = useMemo(
    () => (user.data && info.data ? { user: user.data, info: info.data } : null),
    [user.data, info.data],
  );

  if (signedOut) return <Navigate to="/auth/login" replace />;
  if (failed) return <StartupError message={errorMessage(failed)} />;
  if (!session || !projects.data) {
    return (
      <Bullseye style={{ minHeight: '100vh' }}>
        <Spinner aria-label={t('Loading')} />
      </Bullseye>
    );
  }
  return (
    <SessionContext.Provider value={session}>
      <SignedInRoutes hasProjects={projects.data.length > 0} />
    </SessionContext.Provider>
  );
}

function SignedInRoutes({ hasProjects }: { hasProjects: boolean }) {
  return (
    <Loading>
      <Routes>
        <Route path="/users" element={<UsersPage />} />
        <Route path="/project/new" element={<NewProjectPage />} />
        {/* With zero projects, every other page is the new-project screen (docs/features.md §4). */}
        {hasProjects ? (
          <>
            <Route path="/project/:projectId/*" element={<ProjectPages />} />
            <Route path="*" element={<OpenSelectedProject />} />
          </>
        ) : (
          <Route path="*" element={<Navigate to="/project/new" replace />} />
        )}
      </Routes>
    </Loading>
  );
}

/** The base page opens the last project, else the first (docs/features.md §2). */
function OpenSelectedProject() {
  const projects = useProjects().data ?? [];
  const project = selectProject(projects, undefined, lastProject());
  return <Navigate to={project ? projectHome(project) : '/project/new'} replace />;
}
