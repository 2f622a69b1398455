import type { TaskApproval } from '../approvals/types';

/** Task statuses (docs/features.md §4). */
export const taskStatuses = [
  'waiting',
  'starting',
  'waiting_confirmation',
  'confirmed',
  'running',
  'success',
  'error',
  'stopping',
  'stopped',
] as const;
export type TaskStatus = (typeof taskStatuses)[number];

/** A task as /api answers it in lists (api-contract.md: task in lists). */
export interface Task {
  id: number;
  template_id: number;
  project_id: number;
  status: TaskStatus;
  debug: boolean;
  dry_run: boolean;
  diff: boolean;
  playbook: string;
  environment: string;
  arguments: string | null;
  git_branch: string | null;
  user_id: number | null;
  user_name?: string;
  integration_id: number | null;
  schedule_id: number | null;
  created: string;
  start: string | null;
  end: string | null;
  message: string;
  commit_hash: string | null;
  commit_message: string;
  build_task_id: number | null;
  build_task?: Task | null;
  version: string | null;
  inventory_id: number | null;
  tpl_playbook?: string;
  tpl_alias?: string;
  tpl_type?: '' | 'build' | 'deploy';
  tpl_app?: string;
  /** Bastion's: the approval of a task whose template requires one. */
  approval?: TaskApproval;
}
