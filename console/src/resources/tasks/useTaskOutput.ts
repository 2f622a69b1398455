import { useSyncExternalStore } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { apiGet } from '../../api/client';
import type { LogLine } from '../../api/live';
import { taskKeys } from './keys';
import { TaskOutput } from './taskOutput';

const noSubscribe = () => () => {};

/**
 * A task's output: read page by page (GET …/output?offset=&limit=), kept in
 * the cache for the socket to append to, and re-read from where it stops
 * when asked again (a reopened log catches up; it never starts over).
 */
export function useTaskOutput(projectId: number, taskId: number) {
  const client = useQueryClient();
  const key = taskKeys.output(projectId, taskId);
  const query = useQuery({
    queryKey: key,
    queryFn: () => {
      const held = client.getQueryData<TaskOutput>(key);
      if (held) {
        held.resync();
        return held;
      }
      const output = new TaskOutput((offset, limit) =>
        apiGet<LogLine[]>(`/project/${projectId}/tasks/${taskId}/output?offset=${offset}&limit=${limit}`),
      );
      void output.sync();
      return output;
    },
    // Appended to in place: never stale, never replaced.
    staleTime: Infinity,
    gcTime: 60_000,
    structuralSharing: false,
  });
  const output = query.data;
  const version = useSyncExternalStore(output?.subscribe ?? noSubscribe, output?.getVersion ?? (() => -1));
  return { output, version };
}
