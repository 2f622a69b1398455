import type { Task } from '../tasks/types';

/** Template types (spec §3): "" is a plain task. */
export type TemplateType = '' | 'build' | 'deploy';

/** A survey variable (spec §3): type "" is a string. */
export interface SurveyVar {
  name: string;
  title: string;
  description: string;
  type: '' | 'int';
  required: boolean;
}

/** A template as /api answers it (api-contract.md). */
export interface Template {
  id: number;
  project_id: number;
  name: string;
  description: string;
  type: TemplateType;
  /** "" means ansible (spec §2). */
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
  suppress_success_alerts: boolean;
  last_task: Task | null;
  tasks?: number;
}
