import type { Project } from './types';

/**
 * The project to show (docs/features.md §2): the one in the current route, else the last
 * one remembered on this browser, else the first. An id that names no
 * project of the list (deleted, or the user left it) is passed over.
 */
export function selectProject(
  projects: readonly Project[],
  routeId?: number,
  rememberedId?: number,
): Project | undefined {
  const byId = (id?: number) => (id === undefined ? undefined : projects.find((p) => p.id === id));
  return byId(routeId) ?? byId(rememberedId) ?? projects[0];
}

/** The route of a project's start page: history, which only normal projects have. */
export function projectHome(project: Project): string {
  return `/project/${project.id}/${project.type === '' ? 'history' : 'activity'}`;
}
