import { lazy, Suspense, useContext } from 'react';
import { FormGroup, FormSection, Switch, TextArea } from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';
import { CheckboxField, FieldError, FormDisabledContext, TextField } from '../../components/FormFields';
import type { Errors } from '../../components/useLazyValidation';
import { useProjectAccess } from '../../app/permissions';
import { useViews } from '../views/useViews';
import { appTitle } from './AppIcon';
import { SelectField } from '../../components/SelectField';
import { SurveyEditor } from './SurveyEditor';
import { typeTitles } from './display';
import type { TemplateType } from './types';
import { useProjectOptions, type Named } from './useProjectOptions';
import { useApps, useTemplates } from './useTemplates';
import type { TemplateField, TemplateFormValues } from './validation';
import './TemplateFormFields.css';
import { RequireApprovalField } from '../approvals/RequireApprovalField';

interface TemplateFormFieldsProps {
  values: TemplateFormValues;
  set<K extends keyof TemplateFormValues>(key: K, value: TemplateFormValues[K]): void;
  errors: Errors<TemplateField>;
  /** The server's message about the cron expression. */
  cronError?: string;
  /** The template being edited, which cannot be its own build template. */
  templateId?: number;
  /** Who manages the template's schedule: its fields are read-only then (docs/gitops.md). */
  scheduleManagedBy?: string;
}

const typeOrder: TemplateType[] = ['', 'build', 'deploy'];

// components/lazyDialogs.ts's LazyManaged, declared here: that module's
// chunk (with the delete dialog's dependency list) would add ~0.9 KB to the
// editor's first load, which has little to spare.
const LazyManaged = lazy(() => import('../../components/gitops/Managed'));

/** A select's options from a list of the project's objects. */
function asOptions(query: { data?: Named[]; isPending: boolean }) {
  return { options: (query.data ?? []).map((item) => ({ value: String(item.id), label: item.name })), isLoading: query.isPending };
}

/** Every field of the template editor (docs/features.md §3, issue 8 item 3). */
export function TemplateFormFields({ values, set, errors, cronError, templateId, scheduleManagedBy }: TemplateFormFieldsProps) {
  const { t } = useTranslation('templates');
  const { project } = useProjectAccess();
  const saving = useContext(FormDisabledContext);
  const apps = useApps();
  const views = useViews(project.id);
  const templates = useTemplates(project.id);
  const repositories = asOptions(useProjectOptions(project.id, 'repositories'));
  const inventories = asOptions(useProjectOptions(project.id, 'inventories'));
  const environments = asOptions(useProjectOptions(project.id, 'environments'));
  const keys = asOptions(useProjectOptions(project.id, 'keys'));
  const err = (field: TemplateField) => (errors[field] ? t(errors[field]) : undefined);
  const appIds = (apps.data ?? []).filter((a) => a.active).map((a) => (a.id === 'ansible' ? '' : a.id));
  if (!appIds.includes('')) appIds.unshift('');
  if (!appIds.includes(values.app)) appIds.push(values.app);
  const builds = (templates.data ?? []).filter((tpl) => tpl.type === 'build' && tpl.id !== templateId);

  return (
    <>
      <FormSection title={t('Template')} titleElement="h2">
        <div className="bastion-form-grid">
          <div>
            <TextField id="template-name" label={t('Name')} value={values.name} onChange={(v) => set('name', v)} error={err('name')} isRequired autoFocus />
          </div>
          <div>
            <SelectField id="template-app" label={t('App')} value={values.app} onChange={(v) => set('app', v)} options={appIds.map((id) => ({ value: id, label: t(appTitle(id)) }))} />
          </div>
          <div>
            <SelectField
              id="template-type"
              label={t('Type')}
              value={values.type}
              onChange={(v) => set('type', v as TemplateType)}
              options={typeOrder.map((type) => ({ value: type, label: t(typeTitles[type]) }))}
            />
          </div>
          <div>
            <SelectField id="template-view" label={t('View')} value={values.viewId} onChange={(v) => set('viewId', v)} placeholder={t('No view')} emptyIsValue options={(views.data ?? []).map((v) => ({ value: String(v.id), label: v.title }))} isLoading={views.isPending} />
          </div>
        </div>
        <FormGroup label={t('Description')} fieldId="template-description">
          <TextArea id="template-description" value={values.description} onChange={(_e, v) => set('description', v)} isDisabled={saving} resizeOrientation="vertical" rows={2} />
        </FormGroup>
      </FormSection>

      <FormSection title={t('What runs')} titleElement="h2">
        <div className="bastion-form-grid">
          <div>
            <SelectField id="template-repository" label={t('Repository')} value={values.repositoryId} onChange={(v) => set('repositoryId', v)} placeholder={t('Choose a repository')} {...repositories} error={err('repositoryId')} isRequired />
          </div>
          <div>
            <TextField id="template-playbook" label={t('Playbook filename')} value={values.playbook} onChange={(v) => set('playbook', v)} error={err('playbook')} isRequired placeholder="site.yml" helper={t('The path inside the repository.')} />
          </div>
          <div>
            <SelectField id="template-inventory" label={t('Inventory')} value={values.inventoryId} onChange={(v) => set('inventoryId', v)} placeholder={t('None')} emptyIsValue {...inventories} />
          </div>
          <div>
            <SelectField id="template-environment" label={t('Environment')} value={values.environmentId} onChange={(v) => set('environmentId', v)} placeholder={t('Choose an environment')} {...environments} error={err('environmentId')} isRequired />
          </div>
          <div>
            <SelectField id="template-vault-key" label={t('Vault key')} value={values.vaultKeyId} onChange={(v) => set('vaultKeyId', v)} placeholder={t('None')} emptyIsValue {...keys} />
          </div>
        </div>
      </FormSection>

      {values.type === 'build' && (
        <FormSection title={t('Build')} titleElement="h2">
          <TextField id="template-start-version" label={t('Start version')} value={values.startVersion} onChange={(v) => set('startVersion', v)} error={err('startVersion')} isRequired placeholder="0.0.0" helper={t('Each build counts up by 1.')} />
        </FormSection>
      )}
      {values.type === 'deploy' && (
        <FormSection title={t('Deploy')} titleElement="h2">
          <SelectField id="template-build-template" label={t('Build template')} value={values.buildTemplateId} onChange={(v) => set('buildTemplateId', v)} placeholder={t('Choose a build template')} options={builds.map((b) => ({ value: String(b.id), label: b.name }))} isLoading={templates.isPending} error={err('buildTemplateId')} isRequired />
          <CheckboxField id="template-autorun" label={t('Autorun: deploy each successful build')} checked={values.autorun} onChange={(v) => set('autorun', v)} />
        </FormSection>
      )}

      <FormSection title={t('Schedule')} titleElement="h2">
        {scheduleManagedBy && (
          <Suspense fallback={null}>
            <LazyManaged by={scheduleManagedBy} part="notice" />
          </Suspense>
        )}
        <TextField id="template-cron" label={t('Cron')} value={values.cron} onChange={(v) => set('cron', v)} error={cronError} placeholder="0 0 * * *" helper={t('Empty: no schedule.')} isDisabled={!!scheduleManagedBy} />
        <FormGroup fieldId="template-cron-new-commit">
          <Switch id="template-cron-new-commit" label={t('Run only on a new commit of the repository')} isChecked={values.cronOnlyOnNewCommit} onChange={(_e, v) => set('cronOnlyOnNewCommit', v)} isDisabled={saving || !values.cron.trim() || !!scheduleManagedBy} />
        </FormGroup>
      </FormSection>

      <FormSection title={t('Arguments and options')} titleElement="h2">
        <FormGroup label={t('Arguments')} fieldId="template-arguments">
          <TextArea id="template-arguments" value={values.arguments} onChange={(_e, v) => set('arguments', v)} validated={errors.arguments ? 'error' : 'default'} isDisabled={saving} rows={2} resizeOrientation="vertical" placeholder='["--check", "-v"]' style={{ fontFamily: 'var(--pf-t--global--font--family--mono)' }} />
          <FieldError error={err('arguments')} />
        </FormGroup>
        <CheckboxField id="template-allow-override" label={t('Allow override of arguments in a task')} checked={values.allowOverrideArgs} onChange={(v) => set('allowOverrideArgs', v)} />
        <CheckboxField id="template-allow-branch" label={t('Allow a task to choose its branch or commit')} checked={values.allowOverrideBranch} onChange={(v) => set('allowOverrideBranch', v)} />
        <CheckboxField id="template-allow-inventory" label={t('Allow a task to choose its inventory')} checked={values.allowOverrideInventory} onChange={(v) => set('allowOverrideInventory', v)} />
        <CheckboxField id="template-allow-playbook" label={t('Allow a task to choose its playbook')} checked={values.allowOverridePlaybook} onChange={(v) => set('allowOverridePlaybook', v)} />
        <CheckboxField
          id="template-allow-extra-vars"
          label={t('Allow a task to set variables other than the survey’s')}
          description={t('Variables that change how a run connects or what it executes (ansible_*, PATH, LD_*, …) are always refused.')}
          checked={values.allowOverrideExtraVars}
          onChange={(v) => set('allowOverrideExtraVars', v)}
        />
        <CheckboxField id="template-suppress-alerts" label={t('Suppress success alerts')} checked={values.suppressSuccessAlerts} onChange={(v) => set('suppressSuccessAlerts', v)} />
        <RequireApprovalField checked={values.requireApproval} onChange={(v) => set('requireApproval', v)} />
      </FormSection>

      <FormSection title={t('Survey')} titleElement="h2">
        <SurveyEditor value={values.surveyVars} onChange={(v) => set('surveyVars', v)} isDisabled={saving} />
      </FormSection>
    </>
  );
}
