import type { Task } from '../tasks/types';

/** Whether the task waits for an approver (not a Terraform plan's confirmation). */
export function awaitingApproval(task: Pick<Task, 'status' | 'approval'>): boolean {
  return task.status === 'waiting_confirmation' && task.approval?.status === 'waiting';
}
