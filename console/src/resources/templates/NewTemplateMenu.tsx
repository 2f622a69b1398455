import { useState } from 'react';
import { Dropdown, DropdownItem, DropdownList, MenuToggle } from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router-dom';
import { AppIcon, appTitle } from './AppIcon';
import { useApps } from './useTemplates';

/** The app a new template gets from the menu: ansible is the default, "". */
export const appValue = (id: string) => (id === 'ansible' ? '' : id);

/**
 * "New template": one entry per app the server runs (GET /apps, the active
 * ones by priority), opening the editor for that app.
 */
export function NewTemplateMenu({ projectId }: { projectId: number }) {
  const { t } = useTranslation('templates');
  const navigate = useNavigate();
  const [open, setOpen] = useState(false);
  const apps = useApps();
  const active = (apps.data ?? []).filter((app) => app.active).sort((a, b) => b.priority - a.priority);
  const entries = active.length ? active.map((app) => app.id) : ['ansible'];
  return (
    <Dropdown
      isOpen={open}
      onOpenChange={setOpen}
      onSelect={() => setOpen(false)}
      popperProps={{ position: 'right' }}
      toggle={(ref) => (
        <MenuToggle ref={ref} variant="primary" isExpanded={open} onClick={() => setOpen((v) => !v)}>
          {t('New template')}
        </MenuToggle>
      )}
    >
      <DropdownList>
        {entries.map((id) => (
          <DropdownItem
            key={id}
            icon={<AppIcon app={appValue(id)} decorative />}
            onClick={() => navigate(`/project/${projectId}/templates/new/edit?app=${appValue(id)}`)}
          >
            {t(appTitle(id))}
          </DropdownItem>
        ))}
      </DropdownList>
    </Dropdown>
  );
}
