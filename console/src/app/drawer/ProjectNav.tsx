import { forwardRef, type AnchorHTMLAttributes } from 'react';
import { Nav, NavItem, NavList } from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';
import { Link, useLocation } from 'react-router-dom';
import { useProjectRole, useProjects } from '../../resources/projects/useProjects';
import { msg } from '../../i18n/msg';
import { Permission, projectAccess } from '../permissions';
import { useSession } from '../SessionContext';

interface Link {
  path: string;
  label: string;
  /** Only in normal projects (type ""). */
  normalOnly?: boolean;
  permission?: Permission;
}

// docs/features.md §2: templates, inventory, environment, keys, repositories and
// integrations exist only in normal projects; settings need updateProject.
const links: Link[] = [
  { path: 'history', label: msg('History'), normalOnly: true },
  { path: 'activity', label: msg('Activity') },
  { path: 'templates', label: msg('Task Templates'), normalOnly: true },
  { path: 'inventory', label: msg('Inventory'), normalOnly: true },
  { path: 'environment', label: msg('Environment'), normalOnly: true },
  { path: 'keys', label: msg('Key Store'), normalOnly: true },
  { path: 'repositories', label: msg('Repositories'), normalOnly: true },
  { path: 'integrations', label: msg('Integrations'), normalOnly: true },
  { path: 'team', label: msg('Team') },
  { path: 'settings', label: msg('Settings'), permission: Permission.updateProject },
];

// PatternFly's NavItem renders its `component` with an href; this turns it
// into a router link, so moving between pages does not reload the console.
const RouterLink = forwardRef<HTMLAnchorElement, AnchorHTMLAttributes<HTMLAnchorElement>>(
  function RouterLink({ href, ...props }, ref) {
    return <Link ref={ref} to={href ?? '/'} {...props} />;
  },
);

/** The project's pages, as the user's role and the project type allow. */
export function ProjectNav({ projectId, onNavigate }: { projectId: number; onNavigate(): void }) {
  const { t } = useTranslation();
  const { user } = useSession();
  const { pathname } = useLocation();
  const project = useProjects().data?.find((p) => p.id === projectId);
  const role = useProjectRole(projectId).data;
  if (!project) return null;
  const access = projectAccess(project, user, role?.role ?? '', role?.permissions ?? 0);
  const shown = links.filter(
    (link) => (!link.normalOnly || project.type === '') && (!link.permission || access.can(link.permission)),
  );
  return (
    <Nav aria-label={t('Project')}>
      <NavList>
        {shown.map((link) => {
          const to = `/project/${projectId}/${link.path}`;
          return (
            <NavItem
              key={link.path}
              to={to}
              component={RouterLink}
              isActive={pathname === to || pathname.startsWith(`${to}/`)}
              onClick={onNavigate}
            >
              {t(link.label)}
            </NavItem>
          );
        })}
      </NavList>
    </Nav>
  );
}
