// The rules of a task's status (docs/features.md §4): which actions a status offers and
// how it reads. Pure functions, so the tests call them directly.
import type { TaskStatus } from './types';
import { taskStatuses } from './types';

/** Statuses a task can still be stopped in (docs/features.md §4). */
const stoppable: ReadonlySet<TaskStatus> = new Set<TaskStatus>([
  'running',
  'stopping',
  'waiting',
  'starting',
  'waiting_confirmation',
  'confirmed',
]);

export function canStop(status: TaskStatus): boolean {
  return stoppable.has(status);
}

/** A task already stopping can only be forced: the button reads Force Stop and sends force true. */
export function isForceStop(status: TaskStatus): boolean {
  return status === 'stopping';
}

export function canConfirm(status: TaskStatus): boolean {
  return status === 'waiting_confirmation';
}

/** A task that has ended: its output grows no more. */
export function isFinished(status: TaskStatus): boolean {
  return status === 'success' || status === 'error' || status === 'stopped';
}

/** An unknown status is an error (docs/features.md §4). */
export function knownStatus(status: string): TaskStatus {
  return (taskStatuses as readonly string[]).includes(status) ? (status as TaskStatus) : 'error';
}

export type StatusColor = 'blue' | 'green' | 'red' | 'orange' | 'grey' | 'purple' | 'yellow';

/** The label colour of a status: green success, red failure, blue at work, orange waiting for a person. */
export function statusColor(status: TaskStatus): StatusColor {
  switch (knownStatus(status)) {
    case 'success':
      return 'green';
    case 'error':
      return 'red';
    case 'running':
    case 'starting':
    case 'confirmed':
      return 'blue';
    case 'waiting_confirmation':
      return 'purple';
    case 'stopping':
      return 'orange';
    case 'waiting':
    case 'stopped':
      return 'grey';
  }
}
