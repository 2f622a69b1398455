import type { Template } from '../../templates/types';
import type { Task } from '../types';

export function task(id: number, extra: Partial<Task> = {}): Task {
  return {
    id, template_id: 7, project_id: 1, status: 'success', debug: false, dry_run: false, diff: false,
    playbook: '', environment: '{}', arguments: '[]', git_branch: null, user_id: 1, user_name: 'Administrator',
    integration_id: null, schedule_id: null, created: '2026-11-23T10:00:00Z', start: '2026-11-23T10:00:01Z',
    end: '2026-11-23T10:01:05Z', message: '', commit_hash: null, commit_message: '', build_task_id: null,
    version: null, inventory_id: null, tpl_alias: 'Deploy web', tpl_type: '', tpl_app: '', ...extra,
  };
}

export function template(id: number, extra: Partial<Template> = {}): Template {
  return {
    id, project_id: 1, name: `Template ${id}`, description: '', type: '', app: '', playbook: 'site.yml',
    inventory_id: null, repository_id: 1, environment_id: 1, view_id: null, build_template_id: null,
    start_version: null, autorun: false, git_branch: null, survey_vars: [], arguments: '[]',
    allow_override_args_in_task: false, suppress_success_alerts: false, last_task: null, ...extra,
  };
}
