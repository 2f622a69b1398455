// Between a template as the API has it and the editor's form values, both
// ways. Selects hold ids as text ("" is none).
import type { Schedule, Template, TemplateType } from './types';
import { normalizeSurveyVar, type TemplateFormValues } from './validation';

const idText = (id: number | null | undefined) => (id ? String(id) : '');
const idOf = (text: string) => (text ? Number(text) : null);

export function emptyTemplateValues(app = '', viewId?: number): TemplateFormValues {
  return {
    name: '',
    description: '',
    type: '',
    app,
    playbook: '',
    repositoryId: '',
    inventoryId: '',
    environmentId: '',
    vaultKeyId: '',
    viewId: idText(viewId),
    buildTemplateId: '',
    startVersion: '',
    autorun: false,
    cron: '',
    cronOnlyOnNewCommit: false,
    arguments: '[]',
    allowOverrideArgs: false,
    allowOverrideBranch: false,
    allowOverrideInventory: false,
    allowOverridePlaybook: false,
    allowOverrideExtraVars: false,
    suppressSuccessAlerts: false,
    requireApproval: false,
    surveyVars: [],
  };
}

/** The form of an existing template and its first schedule, which the editor manages. */
export function templateValues(template: Template, schedule: Schedule | undefined): TemplateFormValues {
  return {
    name: template.name,
    description: template.description ?? '',
    type: template.type,
    app: template.app === 'ansible' ? '' : template.app,
    playbook: template.playbook,
    repositoryId: idText(template.repository_id),
    inventoryId: idText(template.inventory_id),
    environmentId: idText(template.environment_id),
    vaultKeyId: idText(template.vaults?.[0]?.vault_key_id),
    viewId: idText(template.view_id),
    buildTemplateId: idText(template.build_template_id),
    startVersion: template.start_version ?? '',
    autorun: template.autorun,
    cron: schedule?.cron_format ?? '',
    cronOnlyOnNewCommit: !!schedule?.repository_id,
    arguments: template.arguments || '[]',
    allowOverrideArgs: template.allow_override_args_in_task,
    allowOverrideBranch: !!template.allow_override_branch_in_task,
    allowOverrideInventory: !!template.allow_override_inventory_in_task,
    allowOverridePlaybook: !!template.allow_override_playbook_in_task,
    allowOverrideExtraVars: !!template.allow_override_extra_vars_in_task,
    suppressSuccessAlerts: template.suppress_success_alerts,
    requireApproval: !!template.require_approval,
    surveyVars: template.survey_vars ?? [],
    taskPods: template.task_pods,
  };
}

/**
 * The body of POST/PUT templates. Fields of other types are cleared: a task
 * keeps no start version, a build no build template. Vaults past the first,
 * which only the API sets, are kept.
 */
export function templateRequest(values: TemplateFormValues, existing?: Template) {
  const type: TemplateType = values.type;
  const otherVaults = existing?.vaults?.slice(1) ?? [];
  const vaultKey = idOf(values.vaultKeyId);
  const firstVault = existing?.vaults?.[0];
  return {
    ...(existing ? { id: existing.id } : {}),
    name: values.name.trim(),
    description: values.description,
    type,
    app: values.app,
    playbook: values.playbook.trim(),
    repository_id: Number(values.repositoryId),
    inventory_id: idOf(values.inventoryId),
    environment_id: Number(values.environmentId),
    vaults: [...(vaultKey ? [{ vault_key_id: vaultKey, name: firstVault?.name ?? '' }] : []), ...otherVaults],
    view_id: idOf(values.viewId),
    build_template_id: type === 'deploy' ? idOf(values.buildTemplateId) : null,
    start_version: type === 'build' ? values.startVersion.trim() : null,
    autorun: type === 'deploy' && values.autorun,
    git_branch: existing?.git_branch ?? null,
    arguments: values.arguments.trim() || '[]',
    allow_override_args_in_task: values.allowOverrideArgs,
    allow_override_branch_in_task: values.allowOverrideBranch,
    allow_override_inventory_in_task: values.allowOverrideInventory,
    allow_override_playbook_in_task: values.allowOverridePlaybook,
    allow_override_extra_vars_in_task: values.allowOverrideExtraVars,
    suppress_success_alerts: values.suppressSuccessAlerts,
    require_approval: values.requireApproval,
    survey_vars: values.surveyVars.map(normalizeSurveyVar),
    task_pods: values.taskPods,
  };
}
