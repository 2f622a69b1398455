import { queryKeys } from '../../api/queryKeys';
import { useResourceList, useSaveResource } from '../../components/useProjectResource';
import type { Repository } from './types';

export function useRepositories(projectId: number) {
  return useResourceList<Repository>(queryKeys.repositories(projectId), projectId, 'repositories');
}

/** POST and PUT answer 204. */
export function useSaveRepository(projectId: number) {
  return useSaveResource<Partial<Repository>>(queryKeys.repositories(projectId), projectId, 'repositories');
}
