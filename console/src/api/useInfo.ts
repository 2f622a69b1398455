import { useQuery } from '@tanstack/react-query';
import { apiGet } from './client';
import { queryKeys } from './queryKeys';

/** System info from GET /api/info. */
export interface Info {
  version: string;
}

export function useInfo() {
  return useQuery({
    queryKey: queryKeys.info,
    queryFn: () => apiGet<Info>('/info'),
    // The version cannot change under a running page.
    staleTime: Infinity,
  });
}

/** Shows "v1.2.3" whether or not the server's version string has the "v". */
export function displayVersion(version: string): string {
  return version.startsWith('v') ? version : `v${version}`;
}
