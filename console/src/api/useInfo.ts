import { useQuery } from '@tanstack/react-query';
import { apiGet } from './client';
import { queryKeys } from './queryKeys';

/** System info from GET /api/info. */
export interface Info {
  version: string;
}

/** Loads /api/info; the console starts only once this answers. */
export function useInfo() {
  return useQuery({
    queryKey: queryKeys.info,
    queryFn: () => apiGet<Info>('/info'),
    // The version cannot change under a running page.
    staleTime: Infinity,
  });
}
