import { queryKeys } from '../../api/queryKeys';
import { useResourceList, useSaveResource } from '../../components/useProjectResource';
import type { Key } from './types';

export function useKeys(projectId: number) {
  return useResourceList<Key>(queryKeys.keys(projectId), projectId, 'keys');
}

/** POST and PUT answer 204. */
export function useSaveKey(projectId: number) {
  return useSaveResource<Partial<Key>>(queryKeys.keys(projectId), projectId, 'keys');
}
