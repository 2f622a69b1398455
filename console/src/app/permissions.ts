// Project permission bits (docs/features.md §6). Global admins pass every check.
import { createContext, useContext } from 'react';
import type { Project } from '../resources/projects/types';
import type { User } from '../resources/users/types';

export const Permission = {
  runProjectTasks: 1,
  updateProject: 2,
  manageProjectResources: 4,
  manageProjectUsers: 8,
} as const;
export type Permission = (typeof Permission)[keyof typeof Permission];

export interface ProjectAccess {
  project: Project;
  /** The user's role slug, "" for an admin who is not a member. */
  role: string;
  permissions: number;
  can(permission: Permission): boolean;
}

export function projectAccess(project: Project, user: User, role: string, permissions: number): ProjectAccess {
  return {
    project,
    role,
    permissions,
    can: (permission) => user.admin || (permissions & permission) === permission,
  };
}

/**
 * The notice that says how the user's access is limited (docs/features.md §6), if it
 * is: read-only for those who may do nothing, and "run any tasks" for those
 * who may run tasks but change nothing. The spec leaves open which role gets
 * which; these follow from the bits, so they stay right for any role.
 */
export function accessNotice(access: ProjectAccess): 'read-only' | 'run-tasks' | undefined {
  const all = Object.values(Permission);
  if (all.some((p) => access.can(p) && p !== Permission.runProjectTasks)) return undefined;
  return access.can(Permission.runProjectTasks) ? 'run-tasks' : 'read-only';
}

export const ProjectAccessContext = createContext<ProjectAccess | null>(null);

/** The open project and what the user may do in it. */
export function useProjectAccess(): ProjectAccess {
  const access = useContext(ProjectAccessContext);
  if (!access) throw new Error('useProjectAccess is only available under /project/{id}');
  return access;
}
