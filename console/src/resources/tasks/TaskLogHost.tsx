import { lazy, Suspense, useCallback } from 'react';
import { useSearchParams } from 'react-router-dom';
import { useLiveUpdates } from '../../api/live';

// The dialog (and the log view) load only when a task is opened.
const TaskLogDialog = lazy(async () => ({ default: (await import('./TaskLogDialog')).TaskLogDialog }));

/** The task named by ?t= (a positive integer), if any. */
export function taskParam(value: string | null): number | undefined {
  if (!value || !/^\d+$/.test(value)) return undefined;
  const id = Number(value);
  return id > 0 ? id : undefined;
}

/**
 * On every page of a project (docs/features.md §2): keeps the live socket open, so the
 * project's task lists stay current, and opens the task log for ?t={taskId}.
 * Closing the log removes the parameter.
 */
export function TaskLogHost() {
  useLiveUpdates();
  const [params, setParams] = useSearchParams();
  const taskId = taskParam(params.get('t'));
  const close = useCallback(
    () =>
      setParams((next) => {
        next.delete('t');
        return next;
      }),
    [setParams],
  );
  if (!taskId) return null;
  return (
    <Suspense fallback={null}>
      <TaskLogDialog key={taskId} taskId={taskId} onClose={close} />
    </Suspense>
  );
}
