import { useQuery } from '@tanstack/react-query';
import { apiGet } from '../../api/client';
import { queryKeys } from '../../api/queryKeys';

/** An event of the project's activity list (api-contract.md). */
export interface ProjectEvent {
  created: string;
  username: string;
  description: string;
  object_type: string;
  object_id: number;
}

export function useProjectEvents(projectId: number) {
  return useQuery({
    queryKey: queryKeys.events(projectId),
    queryFn: () => apiGet<ProjectEvent[]>(`/project/${projectId}/events/last`),
  });
}
