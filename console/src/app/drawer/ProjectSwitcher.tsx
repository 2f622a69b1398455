import { useState } from 'react';
import {
  Divider,
  Dropdown,
  DropdownItem,
  DropdownList,
  Flex,
  FlexItem,
  MenuToggle,
  Truncate,
} from '@patternfly/react-core';
import PlusIcon from '@patternfly/react-icons/dist/esm/icons/plus-icon';
import UploadIcon from '@patternfly/react-icons/dist/esm/icons/upload-icon';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router-dom';
import { projectHome, selectProject } from '../../resources/projects/selection';
import { useProjects } from '../../resources/projects/useProjects';
import { lastProject, rememberProject } from '../../settings/settings';
import { useSession } from '../SessionContext';
import { mayCreateProjects } from '../session';
import { Loading, RestoreProjectDialog } from '../lazyPages';
import { ProjectAvatar } from './ProjectAvatar';

/** The project switcher (docs/features.md §2), with New and Restore project for those who may. */
export function ProjectSwitcher({ projectId, onNavigate }: { projectId?: number; onNavigate(): void }) {
  const { t } = useTranslation();
  const { user } = useSession();
  const projects = useProjects().data ?? [];
  const navigate = useNavigate();
  const [isOpen, setOpen] = useState(false);
  const [restoring, setRestoring] = useState(false);
  const current = selectProject(projects, projectId, lastProject());
  const currentIndex = current ? projects.indexOf(current) : 0;

  const go = (to: string) => {
    setOpen(false);
    onNavigate();
    navigate(to);
  };

  return (
    <>
      <Dropdown
        isOpen={isOpen}
        onOpenChange={setOpen}
        shouldFocusToggleOnSelect
        popperProps={{ width: 'trigger' }}
        toggle={(ref) => (
          <MenuToggle
            ref={ref}
            isFullWidth
            isExpanded={isOpen}
            onClick={() => setOpen((open) => !open)}
            aria-label={t('Switch project')}
            data-testid="project-switcher"
          >
            {current ? (
              <Flex spaceItems={{ default: 'spaceItemsSm' }} alignItems={{ default: 'alignItemsCenter' }} flexWrap={{ default: 'nowrap' }}>
                <ProjectAvatar name={current.name} index={currentIndex} />
                <FlexItem>
                  <Truncate content={current.name} />
                </FlexItem>
              </Flex>
            ) : (
              t('No project')
            )}
          </MenuToggle>
        )}
      >
        <DropdownList>
          {projects.map((project, index) => (
            <DropdownItem
              key={project.id}
              value={project.id}
              icon={<ProjectAvatar name={project.name} index={index} />}
              isSelected={project.id === current?.id}
              onClick={() => {
                // Remembered at the choice, not when the project's page
                // commits: the navigation renders in a transition that can
                // wait on the new page's data, and a reload or a visit to
                // the base page in between would reopen the old project.
                rememberProject(project.id);
                go(projectHome(project));
              }}
            >
              {project.name}
            </DropdownItem>
          ))}
          {mayCreateProjects(user) && projects.length > 0 && <Divider component="li" />}
          {mayCreateProjects(user) && (
            <DropdownItem icon={<PlusIcon />} onClick={() => go('/project/new')}>
              {t('New project')}
            </DropdownItem>
          )}
          {mayCreateProjects(user) && (
            <DropdownItem
              icon={<UploadIcon />}
              onClick={() => {
                setOpen(false);
                setRestoring(true);
              }}
            >
              {t('Restore project')}
            </DropdownItem>
          )}
        </DropdownList>
      </Dropdown>
      {restoring && (
        <Loading>
          <RestoreProjectDialog
            onClose={() => setRestoring(false)}
            onRestored={(project) => {
              setRestoring(false);
              go(projectHome(project));
            }}
          />
        </Loading>
      )}
    </>
  );
}
