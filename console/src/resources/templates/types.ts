import type { TaskPods } from '../taskpods/types';
import type { Task } from '../tasks/types';

/** Template types (docs/features.md §3): "" is a plain task. */
export type TemplateType = '' | 'build' | 'deploy';

/** A survey variable (docs/features.md §3): type "" is a string. */
export interface SurveyVar {
  name: string;
  title: string;
  description: string;
  /** The console's editor offers '' (string) and 'int'; 'secret' comes from the API or kubectl. */
  type: '' | 'int' | 'secret';
  required: boolean;
}

/** A template as /api answers it (api-contract.md). */
export interface Template {
  /** Overrides of the project's task pod settings (ours). */
  task_pods?: TaskPods;
  id: number;
  /** Set when a GitOps tool manages it: read-only (docs/gitops.md). */
  managed_by?: string;
  project_id: number;
  name: string;
  description: string;
  type: TemplateType;
  /** "" means ansible (docs/features.md §2). */
  app: string;
  playbook: string;
  inventory_id: number | null;
  repository_id: number;
  environment_id: number;
  vaults?: { id?: number; vault_key_id: number; name: string }[] | null;
  view_id: number | null;
  build_template_id: number | null;
  start_version: string | null;
  autorun: boolean;
  git_branch: string | null;
  survey_vars: SurveyVar[] | null;
  /** JSON array text. */
  arguments: string | null;
  allow_override_args_in_task: boolean;
  /** What else a task may choose (off by default; older servers leave them out). */
  allow_override_branch_in_task?: boolean;
  allow_override_inventory_in_task?: boolean;
  allow_override_playbook_in_task?: boolean;
  allow_override_extra_vars_in_task?: boolean;
  suppress_success_alerts: boolean;
  /** Bastion's: tasks wait for an approver before they run. */
  require_approval?: boolean;
  last_task: Task | null;
  /** The last task's id (docs/features.md §3); older servers leave it out: use last_task. */
  last_task_id?: number | null;
  tasks?: number;
}

/** A schedule of a template (api-contract.md). */
export interface Schedule {
  id: number;
  project_id: number;
  template_id: number;
  cron_format: string;
  name: string;
  active: boolean;
  /** Set when the schedule runs only on a new commit of this repository. */
  repository_id: number | null;
  /** Set when a GitOps tool manages it: read-only (docs/gitops.md). */
  managed_by?: string;
}

/** A kind of template the server can run (GET /apps), by priority. */
export interface App {
  id: string;
  active: boolean;
  priority: number;
  title: string;
  icon: string;
  color: string;
  dark_color: string;
}
