import { useCallback } from 'react';
import { useSearchParams } from 'react-router-dom';

/** Opens a task's log on the current page: ?t={taskId} (docs/features.md §2), so the link can be shared. */
export function useOpenTask() {
  const [, setSearchParams] = useSearchParams();
  return useCallback(
    (taskId: number) =>
      setSearchParams((params) => {
        params.set('t', String(taskId));
        return params;
      }),
    [setSearchParams],
  );
}
