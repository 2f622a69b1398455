import { lazy, useState } from 'react';
import { Button } from '@patternfly/react-core';
import CogIcon from '@patternfly/react-icons/dist/esm/icons/cog-icon';
import HammerIcon from '@patternfly/react-icons/dist/esm/icons/hammer-icon';
import RocketIcon from '@patternfly/react-icons/dist/esm/icons/rocket-icon';
import { useTranslation } from 'react-i18next';
import { Loading } from '../../app/lazyPages';
import { Permission, useProjectAccess } from '../../app/permissions';
import { runLabel } from './display';
import type { Template } from './types';

// The new task dialog loads when a run is asked for.
const NewTaskDialog = lazy(async () => ({ default: (await import('../tasks/NewTaskDialog')).NewTaskDialog }));

const icons = { Run: <CogIcon />, Build: <HammerIcon />, Deploy: <RocketIcon /> };

/**
 * The action of a template's type (docs/features.md §2): Run with a cog for a task,
 * Build, or Deploy. It opens the new task dialog; hidden without the
 * runProjectTasks permission (docs/features.md §6).
 */
export function RunTemplateButton({ template, variant = 'secondary' }: { template: Template; variant?: 'primary' | 'secondary' }) {
  const { t } = useTranslation('templates');
  const { can } = useProjectAccess();
  const [open, setOpen] = useState(false);
  if (!can(Permission.runProjectTasks)) return null;
  const label = runLabel(template.type);
  return (
    <>
      <Button
        variant={variant}
        size="sm"
        icon={icons[label]}
        onClick={() => setOpen(true)}
        aria-label={`${t(label)} ${template.name}`}
      >
        {t(label)}
      </Button>
      {open && (
        <Loading>
          <NewTaskDialog template={template} onClose={() => setOpen(false)} />
        </Loading>
      )}
    </>
  );
}
