import { useMutation, useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { apiDelete, apiFetch, apiGet, apiPost, apiPostRaw, apiPut } from '../../api/client';
import { queryKeys } from '../../api/queryKeys';
import type { Project, ProjectRequest } from './types';

/**
 * Projects by name, then id. The server's order is not stable (it lists
 * from a cache), and "the first project" (docs/features.md §2, §4) and the avatar
 * colours must not change from one load to the next.
 */
export function byName(projects: Project[]): Project[] {
  return [...projects].sort(
    (a, b) => a.name.localeCompare(b.name, undefined, { sensitivity: 'base' }) || a.id - b.id,
  );
}

/** The projects the user belongs to (all of them, for an admin), by name. */
export function useProjects() {
  return useQuery({ queryKey: queryKeys.projects, queryFn: () => apiGet<Project[]>('/projects'), select: byName });
}

// The list is changed in the cache at once, so the next screen finds the
// new project (or misses the deleted one) before the refetch answers.
function changeList(queryClient: QueryClient, change: (projects: Project[]) => Project[]) {
  queryClient.setQueryData<Project[]>(queryKeys.projects, (projects) => projects && change(projects));
  void queryClient.invalidateQueries({ queryKey: queryKeys.projects });
}

export function useCreateProject() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (request: ProjectRequest) => apiPost<Project>('/projects', request),
    onSuccess: (project) => changeList(queryClient, (projects) => [...projects, project]),
  });
}

export function useUpdateProject(projectId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (request: ProjectRequest) => apiPut(`/project/${projectId}`, { ...request, id: projectId }),
    onSuccess: (_, request) =>
      changeList(queryClient, (projects) =>
        projects.map((p) => (p.id === projectId ? { ...p, ...request, id: projectId } : p)),
      ),
  });
}

export function useDeleteProject(projectId: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => apiDelete(`/project/${projectId}`),
    onSuccess: () => {
      changeList(queryClient, (projects) => projects.filter((p) => p.id !== projectId));
      queryClient.removeQueries({ queryKey: queryKeys.project(projectId) });
    },
  });
}

/** POST /projects/restore with the backup file's text; answers the new project. */
export function useRestoreProject() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (backup: string) => apiPostRaw<Project>('/projects/restore', backup),
    onSuccess: (project) => changeList(queryClient, (projects) => [...projects, project]),
  });
}

/** The user's role and permission bits in a project. */
export interface ProjectRole {
  role: string;
  permissions: number;
}

export function useProjectRole(projectId: number) {
  return useQuery({
    queryKey: queryKeys.projectRole(projectId),
    queryFn: () => apiGet<ProjectRole>(`/project/${projectId}/role`),
  });
}

/** The file name the server gave in Content-Disposition, if any. */
export function attachmentName(header: string | null): string | undefined {
  return header ? /filename="?([^";]+)"?/.exec(header)?.[1] : undefined;
}

/** A backup's file name: the project id and a timestamp (docs/features.md §7). */
export function backupFileName(projectId: number, now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `backup-project-${projectId}-${stamp}.json`;
}

/** Fetches GET /project/{id}/backup and hands it to the browser as a download. */
export async function downloadBackup(projectId: number): Promise<string> {
  const res = await apiFetch('GET', `/project/${projectId}/backup`);
  const name = attachmentName(res.headers.get('Content-Disposition')) ?? backupFileName(projectId);
  const url = URL.createObjectURL(await res.blob());
  try {
    const link = document.createElement('a');
    link.href = url;
    link.download = name;
    document.body.append(link);
    link.click();
    link.remove();
  } finally {
    // After the click has started the download.
    setTimeout(() => URL.revokeObjectURL(url), 0);
  }
  return name;
}
