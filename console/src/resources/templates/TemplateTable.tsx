import { Fragment, useState } from 'react';
import { Button, Flex, FlexItem } from '@patternfly/react-core';
import AngleDownIcon from '@patternfly/react-icons/dist/esm/icons/angle-down-icon';
import AngleRightIcon from '@patternfly/react-icons/dist/esm/icons/angle-right-icon';
import { ExpandableRowContent, Table, Tbody, Td, Th, Thead, Tr } from '@patternfly/react-table';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router-dom';
import { AppIcon } from './AppIcon';
import { columnTitles, templateColumns, type TemplateColumn } from './columns';
import { lastVersion } from './display';
import { LastTasks } from './LastTasks';
import { RunTemplateButton } from './RunTemplateButton';
import { LastStatus, TaskLink, TaskTime } from './TaskCells';
import type { Template } from './types';
import { useNames } from './useProjectOptions';

interface TemplateTableProps {
  projectId: number;
  templates: Template[];
  hidden: string[];
  /** Where a template's detail lives: /project/{id}/templates or …/views/{vid}/templates. */
  base: string;
}

/** The template list (docs/features.md §2): one row per template, expanding to its last 5 tasks. */
export function TemplateTable({ projectId, templates, hidden, base }: TemplateTableProps) {
  const { t } = useTranslation('templates');
  const [expanded, setExpanded] = useState<Set<number>>(new Set());
  const inventories = useNames(projectId, 'inventories');
  const environments = useNames(projectId, 'environments');
  const repositories = useNames(projectId, 'repositories');
  const shown = templateColumns.filter((c) => !hidden.includes(c));
  const toggle = (id: number) =>
    setExpanded((all) => {
      const next = new Set(all);
      if (!next.delete(id)) next.add(id);
      return next;
    });
  const nameOf = (names: Map<number, string>, id: number | null) => (id ? (names.get(id) ?? '—') : '—');

  const cell = (column: TemplateColumn, template: Template) => {
    const last = template.last_task;
    switch (column) {
      case 'name':
        return (
          <Flex spaceItems={{ default: 'spaceItemsSm' }} flexWrap={{ default: 'nowrap' }} alignItems={{ default: 'alignItemsCenter' }}>
            <FlexItem>
              <AppIcon app={template.app} />
            </FlexItem>
            <FlexItem>
              <Link to={`${base}/${template.id}`}>{template.name}</Link>
            </FlexItem>
          </Flex>
        );
      case 'version':
        return lastVersion(template) ?? '—';
      case 'status':
        return <LastStatus task={last} />;
      case 'lastTask':
        // The number and when; who ran it is in the expanded row and the log.
        return last ? (
          <span title={last.user_name || undefined}>
            <TaskLink taskId={last.id} />
            <br />
            <small style={{ color: 'var(--pf-t--global--text--color--subtle)' }}>
              <TaskTime task={last} />
            </small>
          </span>
        ) : (
          '—'
        );
      case 'playbook':
        return template.playbook;
      case 'inventory':
        return nameOf(inventories, template.inventory_id);
      case 'environment':
        return nameOf(environments, template.environment_id);
      case 'repository':
        return nameOf(repositories, template.repository_id);
      case 'actions':
        return <RunTemplateButton template={template} />;
    }
  };

  return (
    // Nine columns do not fit below 992 pixels: there each row stacks its cells.
    <Table aria-label={t('Task Templates')} variant="compact" isExpandable gridBreakPoint="grid-lg">
      <Thead>
        <Tr>
          <Th screenReaderText={t('Show last tasks')} />
          {shown.map((column) =>
            column === 'actions' ? (
              <Th key={column} screenReaderText={t('Actions')} />
            ) : (
              <Th key={column} modifier="wrap">
                {t(columnTitles[column])}
              </Th>
            ),
          )}
        </Tr>
      </Thead>
      {templates.map((template) => {
        const isExpanded = expanded.has(template.id);
        return (
          <Tbody key={template.id} isExpanded={isExpanded}>
            <Tr data-testid={`template-row-${template.id}`}>
              <Td className="pf-v6-c-table__toggle">
                <Button
                  variant="plain"
                  aria-expanded={isExpanded}
                  aria-label={t('Last tasks of {{name}}', { name: template.name })}
                  onClick={() => toggle(template.id)}
                  icon={isExpanded ? <AngleDownIcon /> : <AngleRightIcon />}
                />
              </Td>
              {shown.map((column) => (
                <Fragment key={column}>
                  <Td dataLabel={t(columnTitles[column])} isActionCell={column === 'actions'}>
                    {cell(column, template)}
                  </Td>
                </Fragment>
              ))}
            </Tr>
            <Tr isExpanded={isExpanded}>
              <Td colSpan={shown.length + 1}>
                {isExpanded && (
                  <ExpandableRowContent>
                    <LastTasks projectId={projectId} template={template} />
                  </ExpandableRowContent>
                )}
              </Td>
            </Tr>
          </Tbody>
        );
      })}
    </Table>
  );
}
