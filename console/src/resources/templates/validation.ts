// Template and survey variable rules (docs/features.md §5), as pure functions that the
// forms call lazily and the tests call directly. The messages are English
// keys of the "templates" catalog.
import type { Errors } from '../../components/useLazyValidation';
import type { TaskPods } from '../taskpods/types';
import type { SurveyVar, TemplateType } from './types';

export interface TemplateFormValues {
  name: string;
  description: string;
  type: TemplateType;
  /** "" is ansible. */
  app: string;
  playbook: string;
  repositoryId: string;
  inventoryId: string;
  environmentId: string;
  vaultKeyId: string;
  viewId: string;
  buildTemplateId: string;
  startVersion: string;
  autorun: boolean;
  /** The schedule's cron expression; empty means no schedule. */
  cron: string;
  /** The schedule runs only when the repository has a new commit. */
  cronOnlyOnNewCommit: boolean;
  /** JSON array text. */
  arguments: string;
  allowOverrideArgs: boolean;
  /** A task may choose its branch or commit, inventory, playbook, other variables. */
  allowOverrideBranch: boolean;
  allowOverrideInventory: boolean;
  allowOverridePlaybook: boolean;
  allowOverrideExtraVars: boolean;
  suppressSuccessAlerts: boolean;
  requireApproval: boolean;
  surveyVars: SurveyVar[];
  /** Task pod settings; undefined sends none, which keeps the stored ones. */
  taskPods?: TaskPods;
}

export type TemplateField =
  | 'name'
  | 'playbook'
  | 'repositoryId'
  | 'environmentId'
  | 'startVersion'
  | 'buildTemplateId'
  | 'arguments';

/** Arguments are a JSON array of strings; empty text is none. */
export function argumentsError(text: string): string | undefined {
  if (!text.trim()) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (Array.isArray(value) && value.every((arg) => typeof arg === 'string')) return undefined;
  } catch {
    // Not JSON at all: the same message.
  }
  return 'Arguments must be a JSON array of strings';
}

/**
 * Template (docs/features.md §5): name, playbook filename, repository and environment
 * are required; a build needs a start version, a deploy a build template;
 * the inventory is optional. The cron expression is checked by the server.
 */
export function validateTemplate(values: TemplateFormValues): Errors<TemplateField> {
  return {
    name: values.name.trim() ? undefined : 'Name is required',
    playbook: values.playbook.trim() ? undefined : 'Playbook filename is required',
    repositoryId: values.repositoryId ? undefined : 'Repository is required',
    environmentId: values.environmentId ? undefined : 'Environment is required',
    startVersion: values.type === 'build' && !values.startVersion.trim() ? 'Start version is required' : undefined,
    buildTemplateId: values.type === 'deploy' && !values.buildTemplateId ? 'Build template is required' : undefined,
    arguments: argumentsError(values.arguments),
  };
}

/** Survey variable (docs/features.md §5): name and title are required; the name is trimmed first. */
export function validateSurveyVar(v: SurveyVar): Errors<'name' | 'title'> {
  return {
    name: v.name.trim() ? undefined : 'Name is required',
    title: v.title.trim() ? undefined : 'Title is required',
  };
}

/** The variable as saved: the name trimmed. */
export function normalizeSurveyVar(v: SurveyVar): SurveyVar {
  return { ...v, name: v.name.trim(), title: v.title.trim() };
}

/** Every message these rules can give, for the catalog test. */
export const templateMessages = [
  'Name is required',
  'Playbook filename is required',
  'Repository is required',
  'Environment is required',
  'Start version is required',
  'Build template is required',
  'Arguments must be a JSON array of strings',
  'Title is required',
] as const;
