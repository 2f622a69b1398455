import type { TaskStatus } from './types';

// Placeholder (issue 8): a task's status as a coloured label; error reads Failed.
export function TaskStatusLabel({ status }: { status: TaskStatus }) {
  return <span>{status}</span>;
}
