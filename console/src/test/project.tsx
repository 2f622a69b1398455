import type { ReactElement } from 'react';
import { ProjectAccessContext, projectAccess } from '../app/permissions';
import type { Project } from '../resources/projects/types';
import type { User } from '../resources/users/types';

/** Wraps a project screen in the access the route would give it. */
export function inProject(ui: ReactElement, project: Project, user: User, role: string, permissions: number) {
  return (
    <ProjectAccessContext.Provider value={projectAccess(project, user, role, permissions)}>{ui}</ProjectAccessContext.Provider>
  );
}
