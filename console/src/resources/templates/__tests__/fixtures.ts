import type { Task } from '../../tasks/types';
import type { Template } from '../types';

export function task(id: number, extra: Partial<Task> = {}): Task {
  return {
    id, template_id: 1, project_id: 1, status: 'success', debug: false, dry_run: false, diff: false, playbook: '',
    environment: '{}', arguments: null, git_branch: null, user_id: 1, user_name: 'Administrator', integration_id: null,
    schedule_id: null, created: '2026-01-01T10:00:00Z', start: '2026-01-01T10:00:01Z', end: '2026-01-01T10:00:09Z',
    message: '', commit_hash: null, commit_message: '', build_task_id: null, build_task: null, version: null,
    inventory_id: null, ...extra,
  };
}

export function template(id: number, name: string, extra: Partial<Template> = {}): Template {
  return {
    id, project_id: 1, name, description: '', type: '', app: '', playbook: 'site.yml', inventory_id: null,
    repository_id: 3, environment_id: 4, vaults: [], view_id: null, build_template_id: null, start_version: null,
    autorun: false, git_branch: null, survey_vars: [], arguments: '[]', allow_override_args_in_task: false,
    suppress_success_alerts: false, last_task: null, tasks: 0, ...extra,
  };
}
