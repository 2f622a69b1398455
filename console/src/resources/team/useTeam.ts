import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { apiDelete, apiGet, apiPost, apiPut } from '../../api/client';
import { queryKeys } from '../../api/queryKeys';

export interface Member {
  id: number;
  username: string;
  name: string;
  role: string;
}

/** The team, sorted by name ascending (docs/features.md §2, §7). */
export function useTeam(projectId: number) {
  return useQuery({
    queryKey: queryKeys.team(projectId),
    queryFn: () => apiGet<Member[]>(`/project/${projectId}/users?sort=name&order=asc`),
  });
}

// A change to the team can change the user's own role, so the role is
// reloaded with it.
function useInvalidateTeam(projectId: number) {
  const queryClient = useQueryClient();
  return () => {
    void queryClient.invalidateQueries({ queryKey: queryKeys.team(projectId) });
    void queryClient.invalidateQueries({ queryKey: queryKeys.projectRole(projectId) });
  };
}

export function useLinkMember(projectId: number) {
  const invalidate = useInvalidateTeam(projectId);
  return useMutation({
    mutationFn: (body: { user_id: number; role: string }) => apiPost(`/project/${projectId}/users`, body),
    onSuccess: invalidate,
  });
}

export function useChangeRole(projectId: number) {
  const invalidate = useInvalidateTeam(projectId);
  return useMutation({
    mutationFn: ({ member, role }: { member: Member; role: string }) =>
      apiPut(`/project/${projectId}/users/${member.id}`, { ...member, role }),
    onSuccess: invalidate,
  });
}

export function useRemoveMember(projectId: number) {
  const invalidate = useInvalidateTeam(projectId);
  return useMutation({
    mutationFn: (member: Member) => apiDelete(`/project/${projectId}/users/${member.id}`),
    onSuccess: invalidate,
  });
}

/** DELETE /project/{id}/me. */
export function useLeaveProject(projectId: number) {
  return useMutation({ mutationFn: () => apiDelete(`/project/${projectId}/me`) });
}
