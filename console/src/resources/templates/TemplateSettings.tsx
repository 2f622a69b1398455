import type { ReactNode } from 'react';
import { DescriptionList, DescriptionListDescription, DescriptionListGroup, DescriptionListTerm, Label, LabelGroup } from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';
import { useProjectAccess } from '../../app/permissions';
import { useViews } from '../views/useViews';
import { appTitle } from './AppIcon';
import { typeTitles } from './display';
import type { Template } from './types';
import { useNames } from './useProjectOptions';
import { useTemplates } from './useTemplates';

/** A template's settings, as the editor sets them, read-only. */
export function TemplateSettings({ template }: { template: Template }) {
  const { t } = useTranslation('templates');
  const { project } = useProjectAccess();
  const repositories = useNames(project.id, 'repositories');
  const inventories = useNames(project.id, 'inventories');
  const environments = useNames(project.id, 'environments');
  const keys = useNames(project.id, 'keys');
  const views = useViews(project.id).data ?? [];
  const templates = useTemplates(project.id).data ?? [];
  const name = (names: Map<number, string>, id: number | null | undefined) => (id ? (names.get(id) ?? `#${id}`) : '—');
  const yesNo = (value: boolean) => (value ? t('Yes') : t('No'));
  const vault = template.vaults?.[0];

  const rows: [string, ReactNode][] = [
    [t('Type'), t(typeTitles[template.type])],
    [t('App'), t(appTitle(template.app))],
    [t('Playbook filename'), template.playbook],
    [t('Repository'), name(repositories, template.repository_id)],
    [t('Inventory'), name(inventories, template.inventory_id)],
    [t('Environment'), name(environments, template.environment_id)],
    [t('Vault key'), name(keys, vault?.vault_key_id)],
    [t('View'), template.view_id ? (views.find((v) => v.id === template.view_id)?.title ?? `#${template.view_id}`) : '—'],
  ];
  if (template.type === 'build') rows.push([t('Start version'), template.start_version || '—']);
  if (template.type === 'deploy') {
    const build = templates.find((b) => b.id === template.build_template_id);
    rows.push([t('Build template'), build?.name ?? (template.build_template_id ? `#${template.build_template_id}` : '—')]);
    rows.push([t('Autorun'), yesNo(template.autorun)]);
  }
  rows.push(
    [t('Arguments'), template.arguments && template.arguments !== '[]' ? <code>{template.arguments}</code> : '—'],
    [t('Allow override of arguments in a task'), yesNo(template.allow_override_args_in_task)],
    [t('Allow a task to choose its branch or commit'), yesNo(!!template.allow_override_branch_in_task)],
    [t('Allow a task to choose its inventory'), yesNo(!!template.allow_override_inventory_in_task)],
    [t('Allow a task to choose its playbook'), yesNo(!!template.allow_override_playbook_in_task)],
    [t('Allow a task to set variables other than the survey’s'), yesNo(!!template.allow_override_extra_vars_in_task)],
    [t('Suppress success alerts'), yesNo(template.suppress_success_alerts)],
    [
      t('Survey variables'),
      template.survey_vars?.length ? (
        <LabelGroup numLabels={10}>
          {template.survey_vars.map((v) => (
            <Label key={v.name} isCompact>
              {v.title} ({v.name})
            </Label>
          ))}
        </LabelGroup>
      ) : (
        '—'
      ),
    ],
  );

  return (
    <DescriptionList isCompact isHorizontal horizontalTermWidthModifier={{ default: '16ch', lg: '22ch' }} columnModifier={{ lg: '2Col' }}>
      {rows.map(([term, value]) => (
        <DescriptionListGroup key={term}>
          <DescriptionListTerm>{term}</DescriptionListTerm>
          <DescriptionListDescription>{value}</DescriptionListDescription>
        </DescriptionListGroup>
      ))}
    </DescriptionList>
  );
}
