import { PageSidebarBody } from '@patternfly/react-core';
import { ProjectNav } from './ProjectNav';
import { ProjectSwitcher } from './ProjectSwitcher';
import { Preferences } from './Preferences';
import { UserMenu } from './UserMenu';

interface DrawerProps {
  /** The project of the route; none on /project/new. */
  projectId?: number;
  /** Closes the drawer on a small screen once the user has picked a page. */
  onNavigate(): void;
}

/** The side drawer (docs/features.md §2): switcher, navigation, preferences, user menu. */
export function Drawer({ projectId, onNavigate }: DrawerProps) {
  return (
    <>
      <PageSidebarBody>
        <ProjectSwitcher projectId={projectId} onNavigate={onNavigate} />
      </PageSidebarBody>
      <PageSidebarBody isFilled>
        {projectId !== undefined && <ProjectNav projectId={projectId} onNavigate={onNavigate} />}
      </PageSidebarBody>
      <PageSidebarBody>
        <Preferences />
        <UserMenu />
      </PageSidebarBody>
    </>
  );
}
