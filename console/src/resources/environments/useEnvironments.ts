import { queryKeys } from '../../api/queryKeys';
import { useResourceList, useSaveResource } from '../../components/useProjectResource';
import type { Environment } from './types';

export function useEnvironments(projectId: number) {
  return useResourceList<Environment>(queryKeys.environments(projectId), projectId, 'environment');
}

/** POST and PUT answer 204. */
export function useSaveEnvironment(projectId: number) {
  return useSaveResource<Partial<Environment>>(queryKeys.environments(projectId), projectId, 'environment');
}
